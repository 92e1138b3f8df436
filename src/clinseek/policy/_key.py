"""The episode key: the one patient, the one cutoff and the policy an episode is pinned to."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from ..errors import PolicyError
from ._versions import POLICY_VERSIONS, TEXT_POLICY


@dataclass(frozen=True, slots=True)
class EpisodeKey:
    """What an episode is pinned to; the harness sets it, never the model.

    Attributes:
        subject_id: the MIMIC patient (``hosp.patients.subject_id``).
        prediction_time: the cutoff ``T``; naive, on MIMIC's shifted clock (no time zone).
        policy: the policy version (:data:`TEXT_POLICY` or :data:`MM_POLICY`).
        target_hadm_id: the admission whose codes (diagnoses_icd, procedures_icd, hcpcsevents,
            drgcodes) are hidden whatever the cutoff (the question asks about them).
        target_stay_id: the ED stay whose ``ed.diagnosis`` codes are hidden whatever the cutoff.
        study_ids: the CXR studies linked to the question (the only ones that exist under a
            linked-studies-only policy).
        dicom_ids: the CXR images linked to the question (likewise).
        hide_cxr_reports: the report text of the CXR studies (``cxr.reports``) is not visible.
            Set for questions whose answer a linked study's report states (CXR finding presence,
            enumeration, change); the images and ``cxr.metadata`` stay visible.

    Raises:
        PolicyError: a field has the wrong type, ``prediction_time`` carries a time zone, or the
            policy version is unknown.
    """

    subject_id: int
    prediction_time: datetime
    policy: str = TEXT_POLICY
    target_hadm_id: int | None = None
    target_stay_id: int | None = None
    study_ids: tuple[int, ...] = ()
    dicom_ids: tuple[str, ...] = ()
    hide_cxr_reports: bool = False

    def __post_init__(self) -> None:
        if not _is_int(self.subject_id):
            raise PolicyError(f"EpisodeKey.subject_id: expected an integer, got {self.subject_id!r}")
        if not isinstance(self.prediction_time, datetime):
            raise PolicyError(
                f"EpisodeKey.prediction_time: expected a datetime, got {type(self.prediction_time).__name__}"
            )
        if self.prediction_time.tzinfo is not None:
            raise PolicyError(
                "EpisodeKey.prediction_time: expected a naive datetime on MIMIC's shifted clock, "
                f"got one with time zone {self.prediction_time.tzinfo}"
            )
        if self.policy not in POLICY_VERSIONS:
            raise PolicyError(
                f"EpisodeKey.policy: unknown policy version {self.policy!r}; known: {', '.join(POLICY_VERSIONS)}"
            )
        for name in ("target_hadm_id", "target_stay_id"):
            value = getattr(self, name)
            if value is not None and not _is_int(value):
                raise PolicyError(f"EpisodeKey.{name}: expected an integer or None, got {value!r}")
        if not isinstance(self.study_ids, tuple) or not all(_is_int(s) for s in self.study_ids):
            raise PolicyError(f"EpisodeKey.study_ids: expected a tuple of integers, got {self.study_ids!r}")
        if not isinstance(self.dicom_ids, tuple) or not all(isinstance(d, str) for d in self.dicom_ids):
            raise PolicyError(f"EpisodeKey.dicom_ids: expected a tuple of strings, got {self.dicom_ids!r}")
        if not isinstance(self.hide_cxr_reports, bool):
            raise PolicyError(f"EpisodeKey.hide_cxr_reports: expected a bool, got {self.hide_cxr_reports!r}")


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
