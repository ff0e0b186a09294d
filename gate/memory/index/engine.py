"""tantivy, imported as a hook can afford it.

tantivy's native module imports `datetime` when it loads, for the datetime C API alone (what pyo3's datetime
support reads: the `datetime_CAPI` capsule). `datetime` is a pure-Python module of some 2,600 lines that
defines every class in Python and then replaces them with those of the C module `_datetime`: ~1.2 ms of a
delivering hook's CPU (bench.profile), for definitions nobody uses. So, unless something imported it already,
`_datetime` stands in for it: the same types and names (the classes' own `__module__` is "datetime", so
pickling and repr are as they were), and any later `import datetime` in the process gets them too.
Where `_datetime` does not exist (another interpreter), `datetime` is imported as usual.
"""

from __future__ import annotations

import sys

if "datetime" not in sys.modules:
    try:
        import _datetime
    except ImportError:
        pass
    else:
        sys.modules["datetime"] = _datetime

import tantivy

__all__ = ["tantivy"]
