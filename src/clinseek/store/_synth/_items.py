"""Measured items: lab tests with reference ranges, ICU charted vitals, microbiology, imaging exams.

Lab item ids, labels and units are MIMIC-IV ``d_labitems`` entries (checked against the MIT-LCP
``d_labitems_to_loinc`` concept map); reference ranges are typical adult ranges of the kind
MIMIC stores in ``ref_range_lower``/``ref_range_upper``. Chart item ids are MIMIC-IV ``d_items``
ids. Microbiology ids are the MIMIC-IV ``spec_itemid``/``test_itemid``/``org_itemid``/``ab_itemid``.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Lab:
    """A lab test: MIMIC itemid, unit, healthy mean and spread, reference range, decimals, floor."""

    itemid: int
    unit: str
    mean: float
    sd: float
    low: float
    high: float
    decimals: int
    floor: float = 0.0


LABS: dict[int, Lab] = {
    lab.itemid: lab
    for lab in (
        Lab(50983, "mEq/L", 139.0, 2.5, 133.0, 145.0, 0),  # sodium
        Lab(50971, "mEq/L", 4.2, 0.35, 3.3, 5.1, 1),  # potassium
        Lab(50902, "mEq/L", 102.0, 3.0, 96.0, 108.0, 0),  # chloride
        Lab(50882, "mEq/L", 25.0, 2.0, 22.0, 32.0, 0),  # bicarbonate
        Lab(51006, "mg/dL", 16.0, 5.0, 6.0, 20.0, 0, 2.0),  # urea nitrogen
        Lab(50912, "mg/dL", 0.9, 0.15, 0.5, 1.2, 1, 0.3),  # creatinine
        Lab(50931, "mg/dL", 100.0, 15.0, 70.0, 100.0, 0, 30.0),  # glucose
        Lab(50868, "mEq/L", 13.0, 2.0, 8.0, 20.0, 0),  # anion gap
        Lab(50893, "mg/dL", 9.2, 0.4, 8.4, 10.3, 1),  # calcium
        Lab(50960, "mg/dL", 2.0, 0.2, 1.6, 2.6, 1),  # magnesium
        Lab(50970, "mg/dL", 3.5, 0.5, 2.7, 4.5, 1),  # phosphate
        Lab(51301, "K/uL", 7.5, 1.8, 4.0, 11.0, 1, 0.5),  # white blood cells
        Lab(51222, "g/dL", 13.2, 1.2, 12.0, 16.0, 1, 5.0),  # hemoglobin
        Lab(51221, "%", 39.5, 3.5, 36.0, 48.0, 1, 15.0),  # hematocrit
        Lab(51265, "K/uL", 250.0, 55.0, 150.0, 400.0, 0, 8.0),  # platelets
        Lab(51250, "fL", 90.0, 4.0, 80.0, 100.0, 0),  # MCV
        Lab(51277, "%", 13.5, 1.0, 10.5, 15.5, 1),  # RDW
        Lab(50861, "IU/L", 25.0, 8.0, 0.0, 40.0, 0, 5.0),  # ALT
        Lab(50878, "IU/L", 27.0, 8.0, 0.0, 40.0, 0, 5.0),  # AST
        Lab(50863, "IU/L", 80.0, 20.0, 35.0, 105.0, 0, 20.0),  # alkaline phosphatase
        Lab(50885, "mg/dL", 0.6, 0.2, 0.0, 1.5, 1, 0.1),  # bilirubin total
        Lab(50862, "g/dL", 4.0, 0.3, 3.5, 5.2, 1, 1.5),  # albumin
        Lab(50813, "mmol/L", 1.3, 0.4, 0.5, 2.0, 1, 0.3),  # lactate
        Lab(51003, "ng/mL", 0.01, 0.005, 0.0, 0.01, 2),  # troponin T
        Lab(51237, "", 1.05, 0.08, 0.9, 1.1, 1, 0.8),  # INR(PT)
        Lab(51274, "sec", 12.0, 0.8, 9.4, 12.5, 1, 9.0),  # PT
        Lab(51275, "sec", 30.0, 3.0, 25.0, 36.5, 1, 20.0),  # PTT
        Lab(50963, "pg/mL", 120.0, 60.0, 0.0, 353.0, 0, 10.0),  # NTproBNP
        Lab(50820, "units", 7.40, 0.03, 7.35, 7.45, 2, 6.8),  # pH
        Lab(50821, "mm Hg", 90.0, 10.0, 85.0, 105.0, 0, 35.0),  # pO2
        Lab(50818, "mm Hg", 40.0, 3.0, 35.0, 45.0, 0, 20.0),  # pCO2
        Lab(50852, "%", 5.5, 0.4, 4.0, 6.0, 1, 4.0),  # HbA1c
        Lab(50889, "mg/L", 3.0, 2.0, 0.0, 5.0, 1, 0.1),  # C-reactive protein
    )
}
"""Every lab the generator draws, by MIMIC itemid."""

BMP: tuple[int, ...] = (50983, 50971, 50902, 50882, 51006, 50912, 50931, 50868, 50893, 50960, 50970)
CBC: tuple[int, ...] = (51301, 51222, 51221, 51265, 51250, 51277)
LFT: tuple[int, ...] = (50861, 50878, 50863, 50885, 50862)
COAG: tuple[int, ...] = (51237, 51274, 51275)
GAS: tuple[int, ...] = (50820, 50818, 50821, 50813)
OUTPATIENT: tuple[int, ...] = (50983, 50971, 51006, 50912, 50931, 51222, 51301, 50852)
PROBLEM_PANELS: dict[str, tuple[int, ...]] = {
    "sepsis": (50813, 50889),
    "pneumonia": (50889,),
    "chf": (50963, 51003),
    "nstemi": (51003,),
    "dka": GAS,
    "copd": GAS,
    "cirrhosis": LFT + COAG,
    "gi_bleed": COAG,
}
"""Extra labs each problem adds to the daily panel (BMP and CBC are always drawn)."""


@dataclass(frozen=True, slots=True)
class Vital:
    """An ICU charted vital sign (MIMIC d_items id), its healthy mean and spread, and its severity shift."""

    itemid: int
    unit: str
    mean: float
    sd: float
    shift: float
    decimals: int
    every_h: int
    low: float
    high: float


VITALS: tuple[Vital, ...] = (
    Vital(220045, "bpm", 82.0, 8.0, 30.0, 0, 1, 30.0, 190.0),  # Heart Rate
    Vital(220179, "mmHg", 124.0, 12.0, -32.0, 0, 1, 60.0, 220.0),  # NIBP systolic
    Vital(220180, "mmHg", 70.0, 8.0, -18.0, 0, 1, 30.0, 130.0),  # NIBP diastolic
    Vital(220181, "mmHg", 87.0, 9.0, -22.0, 0, 1, 40.0, 160.0),  # NIBP mean
    Vital(220210, "insp/min", 17.0, 2.5, 9.0, 0, 1, 6.0, 45.0),  # Respiratory Rate
    Vital(220277, "%", 97.0, 1.2, -7.0, 0, 1, 70.0, 100.0),  # SpO2
    Vital(223761, "°F", 98.4, 0.5, 2.6, 1, 4, 94.0, 105.0),  # Temperature Fahrenheit
)
"""Vitals charted in ``icu.chartevents`` (``every_h`` = charting interval)."""

GCS_ITEMS: tuple[tuple[int, tuple[str, ...]], ...] = (
    (220739, ("No response", "To Pain", "To Speech", "Spontaneously")),
    (223900, ("No Response-ETT", "Incomprehensible sounds", "Inappropriate Words", "Confused", "Oriented")),
    (223901, ("No response", "Abnormal extension", "Abnormal Flexion", "Flex-withdraws", "Localizes Pain", "Obeys Commands")),
)
"""GCS components charted as text (valuenum = the score)."""

WEIGHT_ITEM = 226512  # Admission Weight (Kg)
FIO2_ITEM = 223835  # Inspired O2 Fraction
FOLEY_ITEM = 226559  # Foley (outputevents)
VENT_ITEM = 225792  # Invasive Ventilation (procedureevents)
INTUBATION_ITEM = 224385
ART_LINE_ITEM = 225752  # Arterial Line
CVC_ITEM = 224264  # PICC Line
CXR_ITEM = 225459  # Chest X-Ray
DIALYSIS_ITEM = 225802  # Dialysis - CRRT
PICC_DATE_ITEM = 224184  # PICC Line Insertion Date (datetimeevents)
ART_DATE_ITEM = 224288  # Arterial line Insertion Date
WATER_INGREDIENT = 220490  # Water (ingredientevents)
CALORIES_INGREDIENT = 226060
IVF_INGREDIENT = 227074

ICU_SUPPLEMENT: tuple[tuple[int, str, str, str, str, str, str], ...] = (
    (225158, "NaCl 0.9%", "NaCl 0.9%", "inputevents", "Fluids/Intake", "mL", "Solution"),
    (220949, "Dextrose 5%", "Dextrose 5%", "inputevents", "Fluids/Intake", "mL", "Solution"),
    (223835, "Inspired O2 Fraction", "FiO2", "chartevents", "Respiratory", "None", "Numeric"),
    (220490, "Water", "H2O", "ingredientevents", "Ingredients", "mL", "Ingredient"),
    (226060, "Calories", "Calories", "ingredientevents", "Ingredients", "Kcal", "Ingredient"),
    (227074, "IVF ingredient", "IVF ingredient", "ingredientevents", "Ingredients", "mL", "Ingredient"),
)
"""MIMIC-IV d_items rows the MIT-LCP concept maps lack (itemid, label, abbreviation, linksto, category, unit, param_type)."""

CHART_META: dict[int, tuple[str, str, str]] = {
    220045: ("HR", "Routine Vital Signs", "bpm"),
    220179: ("NBPs", "Routine Vital Signs", "mmHg"),
    220180: ("NBPd", "Routine Vital Signs", "mmHg"),
    220181: ("NBPm", "Routine Vital Signs", "mmHg"),
    220210: ("RR", "Respiratory", "insp/min"),
    220277: ("SpO2", "Respiratory", "%"),
    223761: ("Temperature F", "Routine Vital Signs", "°F"),
    220739: ("Eye Opening", "Neurological", ""),
    223900: ("Verbal Response", "Neurological", ""),
    223901: ("Motor Response", "Neurological", ""),
    226512: ("Admission Weight (Kg)", "General", "kg"),
}
"""Abbreviation, category and unit of the chart items the generator uses (MIMIC-IV d_items values)."""


@dataclass(frozen=True, slots=True)
class Specimen:
    """A microbiology specimen and test (MIMIC spec_itemid/test_itemid)."""

    spec_itemid: int
    spec_type_desc: str
    test_itemid: int
    test_name: str


SPECIMENS: dict[str, Specimen] = {
    "blood": Specimen(70012, "BLOOD CULTURE", 90201, "Blood Culture, Routine"),
    "urine": Specimen(70079, "URINE", 90039, "URINE CULTURE"),
    "sputum": Specimen(70062, "SPUTUM", 90055, "RESPIRATORY CULTURE"),
    "peritoneal": Specimen(70053, "PERITONEAL FLUID", 90268, "FLUID CULTURE"),
    "mrsa": Specimen(70091, "MRSA SCREEN", 90189, "MRSA SCREEN"),
}

ORGANISMS: dict[str, tuple[int, str, tuple[int, ...]]] = {
    "ecoli": (80002, "ESCHERICHIA COLI", (90004, 90018, 90019, 90008, 90010, 90012)),
    "kpneu": (80004, "KLEBSIELLA PNEUMONIAE", (90018, 90019, 90008, 90029, 90012)),
    "saureus": (80023, "STAPH AUREUS COAG +", (90015, 90008, 90012)),
    "paeru": (80026, "PSEUDOMONAS AERUGINOSA", (90017, 90028, 90029, 90019, 90013, 90026)),
    "proteus": (80017, "PROTEUS MIRABILIS", (90004, 90018, 90008, 90019)),
    "efaec": (80053, "ENTEROCOCCUS SP.", (90004, 90015, 90010)),
    "spneu": (80076, "STREPTOCOCCUS PNEUMONIAE", (90018, 90015)),
    "hflu": (80256, "HAEMOPHILUS SPECIES NOT INFLUENZAE", (90004, 90018)),
}
"""Organism key -> (org_itemid, org_name, antibiotics tested)."""

ANTIBIOTICS: dict[int, str] = {
    90004: "AMPICILLIN",
    90008: "TRIMETHOPRIM/SULFA",
    90010: "NITROFURANTOIN",
    90012: "GENTAMICIN",
    90013: "TOBRAMYCIN",
    90015: "VANCOMYCIN",
    90017: "CEFTAZIDIME",
    90018: "CEFTRIAXONE",
    90019: "CIPROFLOXACIN",
    90026: "PIPERACILLIN/TAZO",
    90028: "CEFEPIME",
    90029: "MEROPENEM",
}

CXR_EXAM = ("CHEST (PA AND LAT)", "71046")
CXR_PORTABLE_EXAM = ("CHEST (PORTABLE AP)", "71045")
OTHER_EXAMS: dict[str, str] = {
    "CT HEAD W/O CONTRAST": "70450",
    "MR HEAD W & W/O CONTRAST": "70553",
    "LIVER OR GALLBLADDER US (SINGLE ORGAN)": "76705",
    "CT ABD & PELVIS WITH CONTRAST": "74177",
}
"""Radiology exam names (MIMIC-IV-Note radiology_detail ``exam_name``) and their CPT codes."""

HCPCS: tuple[tuple[str, int, str, str], ...] = (
    ("99223", 1, "Initial hospital inpatient care, high complexity", "Hosp IP/Obs High 75"),
    ("99222", 1, "Initial hospital inpatient care, moderate complexity", "Hosp IP/Obs Moderate 55"),
    ("99233", 1, "Subsequent hospital inpatient care, high complexity", "Sbsq Hosp IP/Obs High 50"),
    ("99291", 1, "Critical care, first 30-74 minutes", "Critical Care First Hour"),
    ("99285", 1, "Emergency department visit, high complexity", "Emergency Dept Visit Hi Mdm"),
    ("99238", 1, "Hospital discharge day management, 30 minutes or less", "Hosp Ip/Obs Dschrg Mgmt 30/<"),
    ("G0378", 2, "Hospital observation service, per hour", "Hospital observation per hr"),
    ("71045", 1, "Radiologic examination, chest; single view", "X-ray exam chest 1 view"),
    ("71046", 1, "Radiologic examination, chest; 2 views", "X-ray exam chest 2 views"),
    ("70450", 1, "Computed tomography, head or brain; without contrast material", "Ct head/brain w/o dye"),
)
"""A small HCPCS dictionary (code, category, long and short description written for clinseek)."""
