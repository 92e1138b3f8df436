"""No public name means two things: every name in a package's ``__all__`` is one object wherever it is exported."""

from __future__ import annotations

import importlib
import pkgutil
from collections import defaultdict

import clinseek


def _exports() -> dict[str, dict[str, object]]:
    """name -> {package: the object it exports under that name} over clinseek and every public subpackage."""
    found: dict[str, dict[str, object]] = defaultdict(dict)
    packages = ["clinseek", *(f"clinseek.{m.name}" for m in pkgutil.iter_modules(clinseek.__path__)
                              if not m.name.startswith("_"))]
    for package in packages:
        module = importlib.import_module(package)
        for name in getattr(module, "__all__", ()):
            found[name][package] = getattr(module, name)
    return found


def test_no_public_name_is_defined_twice() -> None:
    clashes = {name: sorted(where) for name, where in _exports().items()
               if len({id(obj) for obj in where.values()}) > 1}
    assert not clashes, f"one public name, different objects: {clashes}"


def test_every_public_package_declares_its_names() -> None:
    packages = [m.name for m in pkgutil.iter_modules(clinseek.__path__) if m.ispkg and not m.name.startswith("_")]
    missing = [p for p in packages if not hasattr(importlib.import_module(f"clinseek.{p}"), "__all__")]
    assert not missing, f"packages without __all__: {missing}"
