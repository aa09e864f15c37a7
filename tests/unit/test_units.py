import pytest

from simfs.units import format_bytes, parse_dd_size, parse_ior_size


@pytest.mark.parametrize(
    "text, expected",
    [
        ("1024000", 1024000),
        ("1M", 1 << 20),
        ("1MiB", 1 << 20),
        ("1MB", 10**6),
        ("64kB", 64000),
        ("4K", 4096),
        ("2x512", 1024),
        ("1b", 512),
        ("1G", 1 << 30),
    ],
)
def test_dd_sizes(text, expected):
    assert parse_dd_size(text) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        ("1m", 1 << 20),
        ("4g", 4 << 30),
        ("256k", 256 << 10),
        ("4096", 4096),
        ("1M", 1 << 20),
        # IOR reads the letter and ignores the rest: the IO500 archive has -t 512kb, and
        # 16MiB / 4KiB are the forms users write.
        ("1mb", 1 << 20),
        ("512kb", 512 << 10),
        ("16MiB", 16 << 20),
        ("4KiB", 4 << 10),
    ],
)
def test_ior_sizes(text, expected):
    assert parse_ior_size(text) == expected


@pytest.mark.parametrize("text", ["", "1q", "m", "-1m", "1.5m", "1mx", "1kib2"])
def test_bad_ior_sizes(text):
    with pytest.raises(ValueError):
        parse_ior_size(text)


def test_format_bytes():
    assert format_bytes(1 << 20) == "1 MiB"
    assert format_bytes(1536) == "1.50 KiB"
