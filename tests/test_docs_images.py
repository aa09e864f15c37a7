"""Every image the docs show is drawn by something the repository holds, and is not
stale: its committed numbers (``img/NAME.csv``) are what that command or script computes
now.  Images drawn by a page's ``$ simfs`` example are checked where that example runs
(``tests/test_docs.py``); images drawn by a script in ``img/`` are checked here."""

from __future__ import annotations

import pandas as pd
import pytest

from tests.test_docs import ROOT, images

SHOWN = images.images()


@pytest.mark.parametrize("image", SHOWN, ids=lambda image: f"{image.page.name}:{image.name}")
def test_a_shown_image_is_drawn_by_the_repository_and_has_its_numbers(image):
    where = f"{image.page.relative_to(ROOT)} shows {image.name}"
    assert image.path.exists(), f"{where}, which does not exist"
    assert image.argv is not None or image.script is not None, (
        f"{where}, but no $ simfs example on the page draws it (--plot/--timeline {image.name}) "
        f"and no script in {image.path.parent.relative_to(ROOT)} names it"
    )
    assert image.numbers.exists(), f"{where} without its numbers: python docs/images.py {image.name}"


def test_every_committed_image_is_shown():
    shown = {image.path for image in SHOWN}
    committed = {path.resolve() for path in ROOT.glob("docs/**/img/*.png")}
    assert not committed - shown, f"images no page shows: {sorted(str(p.relative_to(ROOT)) for p in committed - shown)}"
    numbers = {path.resolve() for path in ROOT.glob("docs/**/img/*.csv")}
    orphans = numbers - {image.numbers for image in SHOWN}
    assert not orphans, f"numbers of no image: {sorted(str(p.relative_to(ROOT)) for p in orphans)}"


@pytest.mark.parametrize("image", [image for image in SHOWN if image.script is not None], ids=lambda image: image.name)
def test_a_script_drawn_image_is_current(image, tmp_path):
    module = images.load_script(image.script)
    now = tmp_path / image.numbers.name
    module.data().to_csv(now, index=False)
    stale = images.differences(now, image.numbers)
    assert not stale, f"{image.name} is stale: python docs/images.py {image.name}\n  " + "\n  ".join(stale[:10])


def test_a_changed_number_is_found(tmp_path):
    committed = tmp_path / "committed.csv"
    committed.write_text("nodes,write agg GB/s,write bottleneck\n1,1.0000001,ost\n2,2.5,ost\n")
    same = tmp_path / "same.csv"
    same.write_text("nodes,write agg GB/s,write bottleneck\n1,1.0000002,ost\n2,2.5,ost\n")
    assert images.differences(same, committed) == []
    moved = tmp_path / "moved.csv"
    moved.write_text("nodes,write agg GB/s,write bottleneck\n1,1.0000001,ost\n2,2.6,ost (hdd_seek)\n")
    assert images.differences(moved, committed) == [
        "row 3, write agg GB/s: 2.6 now, 2.5 committed",
        "row 3, write bottleneck: ost (hdd_seek) now, ost committed",
    ]
    short = tmp_path / "short.csv"
    short.write_text("nodes,write agg GB/s,write bottleneck\n1,1.0000001,ost\n")
    assert images.differences(short, committed) == ["1 rows now, 2 committed"]


def test_the_teaching_page_quotes_its_figures_numbers():
    """docs/background/contention-teaching.md quotes the committed numbers of its two
    script-drawn figures (checked current above): 15 callbacks for 16 lock requests in
    about 18 ms, and runs of 200, 400 and 800 ms at 4, 8 and 16 nodes."""
    folder = ROOT / "docs" / "background" / "img"
    locks = pd.read_csv(folder / "contention-teaching-locks.csv")
    assert (locks["callbacks"].iloc[0], locks["lock_requests"].iloc[0]) == (15, 16)
    assert round(1e3 * locks["end_s"].max()) == 18
    queue = pd.read_csv(folder / "contention-teaching-queue-lfs3.csv")
    last_arrival_ms = (1e3 * queue.groupby("nodes")["time_s"].max()).round(-2)
    assert last_arrival_ms.loc[[4, 8, 16]].tolist() == [200, 400, 800]
