"""gate/memo.py: cache and cached_property behave as functools' do where gate uses them."""

from __future__ import annotations

import pytest

from gate.memo import cache, cached_property


def test_cache_computes_once_per_arguments_and_forgets_on_clear() -> None:
    calls: list[tuple] = []

    @cache
    def joined(a: str, b: str = "-", *, sep: str = "") -> str:
        """Joined."""
        calls.append((a, b, sep))
        return a + sep + b

    assert joined("x", "y") == "xy" and joined("x", "y") == "xy"
    assert joined("x", b="y") == "xy" and joined("x", sep="+") == "x+-"
    assert joined("x", sep="+") == "x+-"
    assert calls == [("x", "y", ""), ("x", "y", ""), ("x", "-", "+")]  # keyword calls are keyed apart, as functools
    assert joined.__name__ == "joined" and joined.__doc__ == "Joined." and joined.__wrapped__("p", "q") == "pq"
    joined.cache_clear()
    joined("x", "y")
    assert len(calls) == 5  # __wrapped__ ran once, and the cleared cache computes again


def test_cache_keeps_none_and_refuses_unhashable_arguments() -> None:
    seen = []

    @cache
    def nothing(key: object) -> None:
        seen.append(key)

    assert nothing(1) is None and nothing(1) is None and seen == [1]
    with pytest.raises(TypeError):
        nothing([1])


def test_cached_property_is_computed_once_then_the_instance_attribute() -> None:
    class Thing:
        runs = 0

        @cached_property
        def value(self) -> int:
            """The value."""
            Thing.runs += 1
            return 42

    thing = Thing()
    assert thing.value == 42 and thing.value == 42 and Thing.runs == 1
    assert thing.__dict__["value"] == 42 and Thing.value.__doc__ == "The value."
    thing.value = 7  # settable, as functools' is
    assert thing.value == 7
    assert Thing().value == 42 and Thing.runs == 2
