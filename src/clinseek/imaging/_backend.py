"""One interface for every imaging model, a registry of backends, and lazy once-per-process loading.

Four kinds of backend sit behind the imaging tools:

* ``classifier`` — :class:`Classifier`: probabilities per pathology (torchxrayvision DenseNet, 18 labels);
* ``segmenter`` — :class:`Segmenter`: a boolean mask per anatomical structure (torchxrayvision PSPNet, 14);
* ``report_generator`` — :class:`ReportGenerator`: FINDINGS / IMPRESSION text (Hugging Face
  ViT-BERT ``VisionEncoderDecoderModel``s from local directories);
* ``grounder`` — :class:`PhraseGrounder`: boxes for a phrase (Hugging Face MAIRA-2 from a local directory).

A factory builds a backend from an :class:`ImagingConfig`; when its package or weights are absent
it raises :class:`BackendUnavailable`, whose message says exactly what to install where. Loaded
backends are cached per process (keyed by kind, backend name and configuration) behind a lock, so
each model loads once, lazily, on first use.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol, runtime_checkable

import numpy as np

from ..errors import ClinseekError, RegistryError
from ._pixels import CxrImage

BackendKind = Literal["classifier", "segmenter", "report_generator", "grounder"]
BACKEND_KINDS: tuple[BackendKind, ...] = ("classifier", "segmenter", "report_generator", "grounder")


@dataclass(frozen=True, slots=True)
class ImagingConfig:
    """Where imaging weights live and how models run; recorded in run manifests.

    Attributes:
        weights_dir: the folder holding model weights (layout in ``docs/imaging.md``):
            ``torchxrayvision/<file>.pt|.pth`` for the DenseNet and PSPNet,
            ``chexpert-mimic-cxr-findings-baseline/`` and ``chexpert-mimic-cxr-impression-baseline/``
            (Hugging Face model folders) for the report generator, ``maira-2/`` for grounding.
            ``None`` = no weights: model tools return a structured ``unavailable`` error.
        device: torch device (``"cpu"``, ``"cuda"``, ``"cuda:1"``).
        backends: backend name per kind (defaults: ``xrv-densenet``, ``xrv-pspnet``,
            ``hf-vit-bert``, ``hf-maira2``).
    """

    weights_dir: Path | None = None
    device: str = "cpu"
    backends: dict[str, str] = field(default_factory=dict)

    def backend_name(self, kind: BackendKind) -> str:
        """The backend chosen for ``kind``."""
        return self.backends.get(kind, DEFAULT_BACKENDS[kind])

    def as_dict(self) -> dict[str, object]:
        """JSON-able form for run manifests."""
        return {"weights_dir": str(self.weights_dir) if self.weights_dir else None, "device": self.device,
                "backends": {k: self.backend_name(k) for k in BACKEND_KINDS}}


DEFAULT_BACKENDS: dict[BackendKind, str] = {
    "classifier": "xrv-densenet",
    "segmenter": "xrv-pspnet",
    "report_generator": "hf-vit-bert",
    "grounder": "hf-maira2",
}


class BackendUnavailable(ClinseekError):
    """A backend cannot run here: its package or its weights are absent.

    Attributes:
        kind: the backend kind.
        backend: the backend name.
        install: what to install or place where (shown to the agent and the user).
    """

    def __init__(self, kind: str, backend: str, install: str) -> None:
        self.kind = kind
        self.backend = backend
        self.install = install
        super().__init__(f"{kind} backend {backend!r} is not available: {install}")


@runtime_checkable
class Classifier(Protocol):
    """Pathology probabilities for one radiograph."""

    labels: tuple[str, ...]

    def classify(self, image: CxrImage) -> dict[str, float]:
        """``{label: probability in [0, 1]}`` for every label in :attr:`labels`."""
        ...


@runtime_checkable
class Segmenter(Protocol):
    """Anatomical masks for one radiograph."""

    structures: tuple[str, ...]

    def segment(self, image: CxrImage) -> dict[str, np.ndarray]:
        """``{structure: bool mask of image.shape}`` for every structure in :attr:`structures`."""
        ...


@dataclass(frozen=True, slots=True)
class GeneratedReport:
    """A generated radiology report."""

    findings: str
    impression: str


@runtime_checkable
class ReportGenerator(Protocol):
    """A draft report for one radiograph."""

    def generate(self, image: CxrImage) -> GeneratedReport:
        """FINDINGS and IMPRESSION text."""
        ...


@dataclass(frozen=True, slots=True)
class Grounding:
    """Boxes for a phrase: each ``(x1, y1, x2, y2)`` as fractions (0-1) of the image width and height."""

    phrase: str
    boxes: tuple[tuple[float, float, float, float], ...]


@runtime_checkable
class PhraseGrounder(Protocol):
    """Where a phrase is seen in one radiograph."""

    def ground(self, image: CxrImage, phrase: str) -> Grounding:
        """The boxes for ``phrase`` (none when it is not seen)."""
        ...


Backend = Classifier | Segmenter | ReportGenerator | PhraseGrounder
Factory = Callable[[ImagingConfig], Backend]

_FACTORIES: dict[tuple[str, str], Factory] = {}
_LOADED: dict[tuple[str, str, str | None, str], Backend] = {}
_LOCK = threading.Lock()


def register_backend(kind: BackendKind, name: str, factory: Factory) -> None:
    """Register ``factory`` as the backend ``name`` of ``kind``.

    Raises:
        RegistryError: ``(kind, name)`` is registered already, or ``kind`` is unknown.
    """
    if kind not in BACKEND_KINDS:
        raise RegistryError(f"unknown imaging backend kind {kind!r}; known: {', '.join(BACKEND_KINDS)}")
    if (kind, name) in _FACTORIES:
        raise RegistryError(f"imaging backend {kind}/{name} is registered twice")
    _FACTORIES[(kind, name)] = factory


def unregister_backend(kind: BackendKind, name: str) -> None:
    """Remove a backend and any loaded instance of it (tests and plug-in hosts)."""
    with _LOCK:
        _FACTORIES.pop((kind, name), None)
        for key in [k for k in _LOADED if k[:2] == (kind, name)]:
            del _LOADED[key]


def backend_names(kind: BackendKind) -> tuple[str, ...]:
    """Registered backend names of ``kind``."""
    return tuple(n for k, n in _FACTORIES if k == kind)


def load_backend(kind: BackendKind, config: ImagingConfig) -> Backend:
    """The backend of ``kind`` chosen by ``config``, built on first use and then reused by the process.

    Loading runs under a process-wide lock (one load at a time; later callers get the cached
    instance). Call it from a worker thread: loading weights blocks.

    Raises:
        BackendUnavailable: the backend is unknown, or its package or weights are absent.
    """
    name = config.backend_name(kind)
    key = (kind, name, str(config.weights_dir) if config.weights_dir else None, config.device)
    with _LOCK:
        if key in _LOADED:
            return _LOADED[key]
        factory = _FACTORIES.get((kind, name))
        if factory is None:
            known = ", ".join(backend_names(kind)) or "none"
            raise BackendUnavailable(kind, name, f"no such backend (registered {kind} backends: {known})")
        backend = factory(config)
        _LOADED[key] = backend
        return backend


def weights_file(config: ImagingConfig, kind: str, backend: str, relative: str, install: str) -> Path:
    """``<weights_dir>/<relative>`` when it exists.

    Raises:
        BackendUnavailable: no ``weights_dir`` is configured, or the file/folder is absent; the
            message names the exact path expected and ``install``.
    """
    if config.weights_dir is None:
        raise BackendUnavailable(kind, backend, f"no imaging weights folder is configured; {install} "
                                 f"into <weights_dir>/{relative} and pass --imaging-weights <weights_dir>")
    path = config.weights_dir / relative
    if not path.exists():
        raise BackendUnavailable(kind, backend, f"{path} does not exist; {install} there")
    return path
