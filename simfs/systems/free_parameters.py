"""Free parameters: the profile fields a calibrator may change, with their bounds.

Declared in the profile::

    [calibration.free]
    "client.copy_read_Bps" = [2.0e8, 4.0e9]   # estimate: plausible range for one core

A field without a declaration keeps its datasheet value.  Bounds must be positive
(parameters are fitted on a log scale: a rate is as likely to be off by x2 as by /2).

A field no measurement informs may follow a free parameter in proportion::

    [calibration.follow]
    "mds.open_per_s" = "mds.create_per_s"   # an open costs about half a create

It keeps its ratio to that parameter's value in the profile, whatever the fit gives the
parameter: a faster fitted metadata server opens faster too.  Nothing more is fitted.  A
follower moves only with a leader the data pin down: where the fit finds its leader not
identifiable (no measurement depends on it any more, or it ends on a bound), the value the
fit gave the leader says nothing, and the follower keeps its profile value.
"""

from __future__ import annotations

from dataclasses import dataclass

from simfs.errors import ProfileError
from simfs.systems.profile import LARGEST_PROFILE_MAGNITUDE, Profile, shown_value


@dataclass(frozen=True)
class FreeParameter:
    name: str
    lower: float
    upper: float
    prior: float

    def __post_init__(self) -> None:
        if not 0 < self.lower < self.upper:
            raise ProfileError(
                f"calibration.free.{self.name}: bounds must satisfy 0 < lower < upper, got [{self.lower}, {self.upper}]"
            )


def declared_followers(profile: Profile) -> dict[str, str]:
    """``[calibration.follow]``: field -> the free parameter it follows."""
    table = profile.data.get("calibration", {}).get("follow", {})
    if not isinstance(table, dict):
        raise ProfileError(f"{profile.origin}: calibration.follow: expected a table of field = free parameter")
    free = profile.data.get("calibration", {}).get("free", {}) or {}
    for field, leader in table.items():
        where = f"{profile.origin}: calibration.follow.{field}"
        if not isinstance(leader, str) or leader not in free:
            raise ProfileError(f"{where}: expected the name of a [calibration.free] parameter, got {leader!r}")
        if field in free:
            raise ProfileError(f"{where}: a free parameter cannot also follow another")
        for name in (field, leader):
            value = profile.raw(name) if profile.has(name) else None
            if (
                isinstance(value, bool)
                or not isinstance(value, (int, float))
                or not 0 < value <= LARGEST_PROFILE_MAGNITUDE
            ):
                raise ProfileError(
                    f"{where}: {name} must be a positive number of at most {LARGEST_PROFILE_MAGNITUDE:g} in the "
                    f"profile, got {shown_value(value)}"
                )
    return dict(table)


def followed_values(
    profile: Profile, values: dict[str, float], held_leaders: frozenset[str] = frozenset()
) -> dict[str, float]:
    """The followers' values for free-parameter ``values``: each at its profile value times
    its leader's change from the profile's value.  Followers of a leader in ``held_leaders``
    (one the data do not identify) are left out: they keep their profile value."""
    return {
        field: float(profile.raw(field)) * values[leader] / float(profile.raw(leader))
        for field, leader in declared_followers(profile).items()
        if leader in values and leader not in held_leaders
    }


def declared_free_parameters(profile: Profile, names: list[str] | None = None) -> list[FreeParameter]:
    """The profile's free parameters (all, or those in ``names``), with prior values."""
    table = profile.data.get("calibration", {}).get("free", {})
    if not isinstance(table, dict) or not table:
        raise ProfileError(f"{profile.origin}: no [calibration.free] parameters declared: nothing to fit")
    selected = names or list(table)
    free = []
    for name in selected:
        if name not in table:
            raise ProfileError(
                f"{profile.origin}: {name} is not declared in [calibration.free] (declared: {', '.join(table)})"
            )
        bounds = table[name]
        if not (isinstance(bounds, list) and len(bounds) == 2 and all(isinstance(b, (int, float)) for b in bounds)):
            raise ProfileError(f"{profile.origin}: calibration.free.{name}: expected [lower, upper], got {bounds!r}")
        if not 0 < bounds[0] < bounds[1] <= LARGEST_PROFILE_MAGNITUDE:
            raise ProfileError(
                f"{profile.origin}: calibration.free.{name}: bounds must satisfy 0 < lower < upper <= "
                f"{LARGEST_PROFILE_MAGNITUDE:g}, got {shown_value(bounds)}"
            )
        if not profile.has(name):
            raise ProfileError(
                f"{profile.origin}: calibration.free names {name}, which the profile does not set"
                + profile.misspelt_note(name)
            )
        prior = profile.raw(name)
        if isinstance(prior, bool) or not isinstance(prior, (int, float)) or not 0 < prior <= LARGEST_PROFILE_MAGNITUDE:
            # Fitted on a log scale: a prior of zero or below has no logarithm.
            raise ProfileError(
                f"{profile.origin}: {name}: a free parameter must be a positive number of at most "
                f"{LARGEST_PROFILE_MAGNITUDE:g}, got {shown_value(prior)}"
            )
        free.append(FreeParameter(name, float(bounds[0]), float(bounds[1]), float(prior)))
    return free
