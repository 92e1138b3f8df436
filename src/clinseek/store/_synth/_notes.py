"""MIMIC-IV-Note tables: discharge summaries written from the structured record (signed hours to
days after discharge), radiology reports of every study (outpatient ones with ``hadm_id`` NULL)."""

from __future__ import annotations

import math

from ._conditions import CHRONIC
from ._context import Ctx, chronic_drugs, day_floor
from ._drugs import DRUGS
from ._frame import HOUR, MINUTE, NAN, Frame, Rows
from ._studies import Study
from ._timeline import Admission, Timeline

_LAB_NAMES = {51301: "WBC", 51222: "Hgb", 51265: "Plt", 50983: "Na", 50971: "K", 50912: "Creat", 51006: "UreaN",
              50931: "Glucose", 50813: "Lactate", 51003: "cTropnT", 50963: "proBNP", 50885: "TotBili", 51237: "INR(PT)"}
_SERVICES = {"MED": "MEDICINE", "CMED": "CARDIOLOGY", "NMED": "NEUROLOGY", "ORTHO": "ORTHOPAEDICS"}


def _labs_line(values: dict[int, float]) -> str:
    return " ".join(f"{name}-{values[i]:g}" for i, name in _LAB_NAMES.items() if i in values)


def discharge_text(tl: Timeline, adm: Admission, ctx: Ctx) -> str:
    """A discharge summary that agrees with the admission's structured rows."""
    p = tl.patient
    age = int(p.age_at(adm.admittime))
    sex = "woman" if p.gender == "F" else "man"
    history = [CHRONIC[i].title for i in p.chronic]
    labs = ctx.lab_summary.get(adm.hadm_id, {})
    dx_codes = ctx.dx.get(adm.hadm_id, [])
    titles = [ctx.dx_titles.get((c, adm.icd_version), c) for c in dx_codes]
    organisms = ctx.organisms.get(adm.hadm_id, [])
    plan = ctx.plans.get(adm.hadm_id, [])
    given = sorted({o.drug.drug for o in plan})
    course = [f"# {adm.problem.title.capitalize()}: treated with {', '.join(given) or 'supportive care'}."]
    if adm.icu:
        days = sum(s.outtime - s.intime for s in adm.icu) / (24 * HOUR)
        extra = []
        if any(s.ventilated for s in adm.icu):
            extra.append("intubated and mechanically ventilated")
        if any(s.pressors for s in adm.icu):
            extra.append("required norepinephrine for hypotension")
        course.append(f"Required ICU care for {days:.1f} days" + (f"; {', '.join(extra)}." if extra else "."))
    if organisms:
        course.append(f"Cultures grew {', '.join(sorted(set(organisms)))}.")
    home = [DRUGS[k].drug for k in chronic_drugs(tl)]
    outcome = "Expired" if adm.died else adm.discharge_location.title()
    sections = [
        "Name:  ___                     Unit No:   ___",
        "Admission Date:  ___              Discharge Date:   ___",
        f"Date of Birth:  ___             Sex:   {p.gender}",
        f"Service: {_SERVICES.get(adm.problem.service, 'MEDICINE')}",
        f"Chief Complaint:\n{adm.problem.complaint}",
        f"History of Present Illness:\n___ is a {age} year old {sex} with a history of "
        f"{', '.join(history) or 'no significant medical problems'} who presents with {adm.problem.complaint.lower()}.",
        "Past Medical History:\n" + ("\n".join(f"- {h}" for h in history) or "None."),
        f"Pertinent Results:\nADMISSION LABS: {_labs_line(labs.get('first', {}))}\n"
        f"DISCHARGE LABS: {_labs_line(labs.get('last', {}))}",
        "Brief Hospital Course:\n" + "\n".join(course),
        "Medications on Admission:\n" + ("\n".join(f"{i + 1}. {d}" for i, d in enumerate(home)) or "None."),
    ]
    if adm.died:
        sections.append("Discharge Disposition:\nExpired")
        sections.append(f"Discharge Diagnosis:\n{'; '.join(titles)}")
    else:
        sections.append("Discharge Medications:\n" + ("\n".join(f"{i + 1}. {d}" for i, d in enumerate(home)) or "None."))
        sections.append(f"Discharge Disposition:\n{outcome}")
        sections.append(f"Discharge Diagnosis:\nPrimary: {titles[0] if titles else adm.problem.title}\n"
                        f"Secondary: {'; '.join(titles[1:]) or 'None'}")
        sections.append("Discharge Condition:\nMental Status: Clear and coherent.\nActivity Status: Ambulatory.")
    return "\n\n".join(sections) + "\n"


def note_tables(timelines: list[Timeline], studies: list[Study], ctx: Ctx) -> dict[str, Frame]:
    """``discharge``, ``discharge_detail``, ``radiology`` and ``radiology_detail`` for a chunk."""
    ds, ds_detail, rr, rr_detail = Rows(), Rows(), Rows(), Rows()
    rng = ctx.rng
    by_subject: dict[int, list[Study]] = {}
    for s in studies:
        by_subject.setdefault(s.subject_id, []).append(s)
    for tl in timelines:
        sid = tl.patient.subject_id
        for k, adm in enumerate(tl.admissions, start=1):
            note_id = f"{sid}-DS-{k}"
            store = math.floor((adm.dischtime + rng.uniform(2, 60) * HOUR) / MINUTE) * MINUTE
            ds.add(1, note_id=note_id, subject_id=sid, hadm_id=adm.hadm_id, note_type="DS", note_seq=k,
                   charttime=day_floor(adm.dischtime), storetime=store, text=discharge_text(tl, adm, ctx))
            ds_detail.add(1, note_id=note_id, subject_id=sid, field_name="author", field_value="___", field_ordinal=1)
        for k, s in enumerate(by_subject.get(sid, []), start=1):
            note_id = f"{sid}-RR-{k}"
            store = math.floor((s.time + rng.uniform(0.5, 10) * HOUR) / MINUTE) * MINUTE
            rr.add(1, note_id=note_id, subject_id=sid, hadm_id=float(s.hadm_id) if s.hadm_id else NAN, note_type="RR",
                   note_seq=k, charttime=s.time, storetime=store, text=s.text)
            rr_detail.add(3, note_id=note_id, subject_id=sid, field_name=["exam_name", "cpt_code", "author"],
                          field_value=[s.exam, s.cpt, "___"], field_ordinal=1)
    return {"discharge": ds.frame(), "discharge_detail": ds_detail.frame(),
            "radiology": rr.frame(), "radiology_detail": rr_detail.frame()}
