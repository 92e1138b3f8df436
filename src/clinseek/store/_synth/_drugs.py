"""Drug catalogue: what prescriptions, pharmacy, eMAR, ICU inputs, ED Pyxis and medrecon rows say.

Names follow MIMIC-IV ``prescriptions.drug`` spellings; ICU item ids are MIMIC-IV ``d_items``
ids (from the MIT-LCP ``inputevents_to_rxnorm`` concept map clinseek ships, plus NaCl 0.9 %).
GSN and NDC codes are **synthetic** (derived from the drug name), not real product codes.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class IcuInput:
    """How a drug appears in ``icu.inputevents`` (MIMIC d_items id and ordering category)."""

    itemid: int
    category: str  # ordercategoryname
    description: str  # ordercategorydescription: Continuous Med, Drug Push, Continuous IV, Bolus
    amountuom: str
    rateuom: str | None  # None for boluses
    amount: float  # per administration (bolus) or per hour (continuous)


@dataclass(frozen=True, slots=True)
class Drug:
    """One medication as ordered and given."""

    key: str
    drug: str
    route: str
    dose: str
    unit: str
    form: str  # form_unit_disp
    strength: str  # prod_strength
    per_day: float  # doses_per_24_hrs (0 = continuous infusion)
    frequency: str
    etc: str  # Enhanced Therapeutic Class (ED medrecon)
    icu: IcuInput | None = None

    @property
    def gsn(self) -> str:
        """A synthetic 6-digit Generic Sequence Number, stable per drug."""
        return f"{zlib.crc32(self.drug.encode()) % 90_0000 + 10_0000:06d}"

    @property
    def ndc(self) -> str:
        """A synthetic 11-digit National Drug Code, stable per drug and route."""
        return f"{zlib.crc32((self.drug + self.route).encode()) % 10**11:011d}"

    @property
    def formulary_drug_cd(self) -> str:
        """A MIMIC-like formulary code (letters of the name plus the dose)."""
        letters = "".join(c for c in self.drug.upper() if c.isalpha())[:6]
        return f"{letters}{self.dose.split('-')[0].replace('.', '')}"


def _d(key: str, drug: str, route: str, dose: str, unit: str, form: str, per_day: float, freq: str, etc: str,
       icu: IcuInput | None = None) -> Drug:
    strength = f"{dose}{unit} {form.title()}" if per_day else f"{drug} infusion"
    return Drug(key, drug, route, dose, unit, form, strength, per_day, freq, etc, icu)


_PUSH = "02-Fluids (Crystalloids)"
DRUGS: dict[str, Drug] = {
    d.key: d
    for d in (
        _d("vancomycin", "Vancomycin", "IV", "1000", "mg", "VIAL", 2, "Q12H", "Antibiotic - Glycopeptides",
           IcuInput(225798, "08-Antibiotics (IV)", "Drug Push", "dose", None, 1.0)),
        _d("piperacillin", "Piperacillin-Tazobactam", "IV", "4.5", "g", "VIAL", 3, "Q8H", "Antibiotic - Penicillins",
           IcuInput(225893, "08-Antibiotics (IV)", "Drug Push", "dose", None, 1.0)),
        _d("ceftriaxone", "CefTRIAXone", "IV", "1", "g", "VIAL", 1, "Q24H", "Antibiotic - Cephalosporins",
           IcuInput(225855, "08-Antibiotics (IV)", "Drug Push", "dose", None, 1.0)),
        _d("azithromycin", "Azithromycin", "PO/NG", "500", "mg", "TAB", 1, "Q24H", "Antibiotic - Macrolides",
           IcuInput(225845, "08-Antibiotics (IV)", "Drug Push", "dose", None, 1.0)),
        _d("cefazolin", "CeFAZolin", "IV", "2", "g", "VIAL", 3, "Q8H", "Antibiotic - Cephalosporins",
           IcuInput(225850, "08-Antibiotics (IV)", "Drug Push", "dose", None, 1.0)),
        _d("nacl_bolus", "0.9% Sodium Chloride", "IV", "1000", "mL", "BAG", 1, "ONCE", "IV Solutions - Electrolytes",
           IcuInput(225158, _PUSH, "Bolus", "ml", None, 500.0)),
        _d("acetaminophen", "Acetaminophen", "PO/NG", "650", "mg", "TAB", 4, "Q6H:PRN", "Analgesic - Non-Narcotic",
           IcuInput(228315, "05-Med Bolus", "Drug Push", "mg", None, 1000.0)),
        _d("furosemide_iv", "Furosemide", "IV", "40", "mg", "VIAL", 2, "BID", "Diuretic - Loop",
           IcuInput(221794, "05-Med Bolus", "Drug Push", "mg", None, 40.0)),
        _d("furosemide_po", "Furosemide", "PO", "40", "mg", "TAB", 1, "DAILY", "Diuretic - Loop"),
        _d("metoprolol", "Metoprolol Tartrate", "PO/NG", "25", "mg", "TAB", 2, "BID", "Beta-Blockers - Cardio-Selective",
           IcuInput(225974, "05-Med Bolus", "Drug Push", "mg", None, 5.0)),
        _d("lisinopril", "Lisinopril", "PO", "10", "mg", "TAB", 1, "DAILY", "Antihypertensive - ACE Inhibitors"),
        _d("aspirin", "Aspirin", "PO/NG", "81", "mg", "TAB", 1, "DAILY", "Platelet Aggregation Inhibitors"),
        _d("atorvastatin", "Atorvastatin", "PO/NG", "40", "mg", "TAB", 1, "DAILY", "Antihyperlipidemic - HMG CoA Reductase Inhibitors"),
        _d("clopidogrel", "Clopidogrel", "PO/NG", "75", "mg", "TAB", 1, "DAILY", "Platelet Aggregation Inhibitors"),
        _d("heparin_drip", "Heparin", "IV", "1000", "UNIT", "BAG", 0, "CONTINUOUS", "Anticoagulants - Heparin",
           IcuInput(225152, "01-Drips", "Continuous Med", "units", "units/hour", 1000.0)),
        _d("heparin_sc", "Heparin", "SC", "5000", "UNIT", "VIAL", 3, "Q8H", "Anticoagulants - Heparin",
           IcuInput(225975, "05-Med Bolus", "Drug Push", "dose", None, 1.0)),
        _d("enoxaparin", "Enoxaparin Sodium", "SC", "40", "mg", "SYR", 1, "DAILY", "Anticoagulants - Low Molecular Weight Heparin",
           IcuInput(225906, "05-Med Bolus", "Drug Push", "mg", None, 40.0)),
        _d("pantoprazole_iv", "Pantoprazole", "IV", "40", "mg", "VIAL", 2, "Q12H", "Proton Pump Inhibitors",
           IcuInput(225910, "05-Med Bolus", "Drug Push", "dose", None, 1.0)),
        _d("octreotide", "Octreotide Acetate", "IV", "50", "mcg", "BAG", 0, "CONTINUOUS", "Somatostatic Agents",
           IcuInput(225155, "01-Drips", "Continuous Med", "mcg", "mcg/hour", 50.0)),
        _d("prednisone", "PredniSONE", "PO", "40", "mg", "TAB", 1, "DAILY", "Glucocorticoids"),
        _d("albuterol_neb", "Albuterol 0.083% Neb Soln", "IH", "1", "NEB", "NEB", 4, "Q6H", "Beta-Agonists - Inhaled"),
        _d("ipratropium_neb", "Ipratropium Bromide Neb", "IH", "1", "NEB", "NEB", 4, "Q6H", "Anticholinergics - Inhaled"),
        _d("sodium_bicarbonate", "Sodium Bicarbonate", "IV", "50", "mEq", "VIAL", 1, "ONCE", "Alkalinizing Agents",
           IcuInput(220995, "02-Fluids (Crystalloids)", "Continuous IV", "mEq", "mEq/hour", 50.0)),
        _d("calcium_gluconate", "Calcium Gluconate", "IV", "1", "g", "BAG", 1, "ONCE", "Calcium Replacement",
           IcuInput(221456, "03-IV Fluid Bolus", "Continuous IV", "grams", "grams/hour", 1.0)),
        _d("insulin_drip", "Insulin", "IV", "100", "UNIT", "BAG", 0, "CONTINUOUS", "Insulins",
           IcuInput(223258, "01-Drips", "Continuous Med", "units", "units/hour", 6.0)),
        _d("kcl_iv", "Potassium Chloride", "IV", "20", "mEq", "BAG", 2, "Q12H", "Potassium Replacement",
           IcuInput(225166, "02-Fluids (Crystalloids)", "Continuous IV", "mEq", "mEq/hour", 10.0)),
        _d("oxycodone", "OxyCODONE (Immediate Release)", "PO/NG", "5", "mg", "TAB", 4, "Q4H:PRN", "Analgesic - Opioid Agonists"),
        _d("lactulose", "Lactulose", "PO/NG", "30", "mL", "UDCUP", 3, "TID", "Laxative - Saline/Osmotic"),
        _d("rifaximin", "Rifaximin", "PO", "550", "mg", "TAB", 2, "BID", "Antibiotic - Rifamycins"),
        _d("norepinephrine", "Norepinephrine", "IV", "4", "mg", "BAG", 0, "CONTINUOUS", "Vasopressors",
           IcuInput(221906, "01-Drips", "Continuous Med", "mg", "mcg/kg/min", 0.12)),
        _d("propofol", "Propofol", "IV", "1000", "mg", "VIAL", 0, "CONTINUOUS", "Sedative-Hypnotics",
           IcuInput(222168, "01-Drips", "Continuous Med", "mg", "mcg/kg/min", 30.0)),
        _d("amlodipine", "Amlodipine", "PO", "5", "mg", "TAB", 1, "DAILY", "Calcium Channel Blockers"),
        _d("metformin", "MetFORMIN (Glucophage)", "PO", "500", "mg", "TAB", 2, "BID", "Antidiabetic - Biguanides"),
        _d("insulin_glargine", "Glargine", "SC", "20", "UNIT", "VIAL", 1, "QHS", "Insulins",
           IcuInput(223260, "06-Insulin (Non IV)", "Drug Push", "units", None, 20.0)),
        _d("calcitriol", "Calcitriol", "PO", "0.25", "mcg", "CAP", 1, "DAILY", "Vitamin D Analogs"),
        _d("tiotropium", "Tiotropium Bromide", "IH", "1", "CAP", "CAP", 1, "DAILY", "Anticholinergics - Inhaled"),
        _d("albuterol_inh", "Albuterol Inhaler", "IH", "2", "PUFF", "INH", 4, "Q6H:PRN", "Beta-Agonists - Inhaled"),
        _d("apixaban", "Apixaban", "PO", "5", "mg", "TAB", 2, "BID", "Anticoagulants - Factor Xa Inhibitors"),
        _d("carvedilol", "Carvedilol", "PO", "12.5", "mg", "TAB", 2, "BID", "Beta-Blockers - Non-Selective"),
        _d("levothyroxine", "Levothyroxine Sodium", "PO", "75", "mcg", "TAB", 1, "DAILY", "Thyroid Hormones"),
        _d("sertraline", "Sertraline", "PO", "50", "mg", "TAB", 1, "DAILY", "Antidepressants - SSRIs"),
        _d("omeprazole", "Omeprazole", "PO", "20", "mg", "CAP", 1, "DAILY", "Proton Pump Inhibitors"),
        _d("loratadine", "Loratadine", "PO", "10", "mg", "TAB", 1, "DAILY", "Antihistamines - Non-Sedating"),
        _d("ibuprofen", "Ibuprofen", "PO", "600", "mg", "TAB", 3, "Q8H:PRN", "NSAIDs"),
        _d("ondansetron", "Ondansetron", "IV", "4", "mg", "VIAL", 3, "Q8H:PRN", "Antiemetics - 5-HT3 Antagonists"),
        _d("lidocaine", "Lidocaine 1%", "LOCAL", "5", "mL", "VIAL", 1, "ONCE", "Local Anesthetics"),
        _d("meclizine", "Meclizine", "PO", "25", "mg", "TAB", 3, "Q8H:PRN", "Antiemetics - Antihistamines"),
        _d("docusate", "Docusate Sodium", "PO", "100", "mg", "CAP", 2, "BID", "Laxative - Stool Softeners"),
        _d("senna", "Senna", "PO", "8.6", "mg", "TAB", 2, "BID:PRN", "Laxative - Stimulant"),
    )
}
"""Every drug the generator orders, by key."""

PROPHYLAXIS: tuple[str, ...] = ("heparin_sc", "docusate", "senna")
"""Drugs most inpatients get (DVT prophylaxis, bowel regimen)."""

VASOPRESSOR = "norepinephrine"
SEDATION = "propofol"
