"""functools.cache and functools.cached_property for the hot path, without functools (standard library only).

`import functools` costs a hook process ~2.5 ms (it loads collections, keyword, operator, reprlib and types with
it), and the hooks used it for these two alone. They behave as functools' do for the way gate calls them: one
result per distinct arguments, kept for the life of the process (`cache_clear()` forgets them); a property
computed on first access and then kept in the instance's dictionary.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing costs the hook milliseconds to import; annotations are strings anyway
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

_KEYWORDS = object()  # between the positional arguments and the keyword ones in a key (functools' kwd_mark)


def cache(function: Callable[..., Any]) -> Callable[..., Any]:
    """functools.cache: the function's result per arguments, computed once."""
    results: dict[Any, Any] = {}

    def cached(*args: Any, **kwargs: Any) -> Any:
        key = (*args, _KEYWORDS, *kwargs.items()) if kwargs else args
        try:
            return results[key]
        except KeyError:
            pass
        value = results[key] = function(*args, **kwargs)
        return value

    cached.cache_clear = results.clear  # type: ignore[attr-defined]
    cached.__wrapped__ = function  # type: ignore[attr-defined]
    cached.__name__ = function.__name__
    cached.__qualname__ = function.__qualname__
    cached.__doc__ = function.__doc__
    cached.__module__ = function.__module__
    return cached


class cached_property:
    """functools.cached_property: computed at the first access, then the instance's own attribute."""

    def __init__(self, function: Callable[[Any], Any]) -> None:
        self.function = function
        self.name = function.__name__
        self.__doc__ = function.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, instance: Any, owner: type | None = None) -> Any:
        if instance is None:
            return self
        value = instance.__dict__[self.name] = self.function(instance)
        return value
