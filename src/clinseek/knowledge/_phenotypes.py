"""The 25 MedMod phenotypes and the CCS single-level categories that define each.

Source: Harutyunyan et al., "Multitask learning and benchmarking with clinical time series data"
(Scientific Data 2019; mimic3-benchmarks ``hcup_ccs_2015_definitions.yaml``), as reused by MedMod
(nyuad-cai/MedMod) for ClinSeek-Bench-MM's phenotype category. The same table defines the
phenotype labels of the benchmark builder (``clinseek.bench``); a test keeps the two identical.
"""

from __future__ import annotations

MEDMOD_PHENOTYPES: dict[str, tuple[int, ...]] = {
    "Acute and unspecified renal failure": (157,),
    "Acute cerebrovascular disease": (109,),
    "Acute myocardial infarction": (100,),
    "Cardiac dysrhythmias": (106,),
    "Chronic kidney disease": (158,),
    "Chronic obstructive pulmonary disease and bronchiectasis": (127,),
    "Complications of surgical procedures or medical care": (237, 238),
    "Conduction disorders": (105,),
    "Congestive heart failure; nonhypertensive": (108,),
    "Coronary atherosclerosis and other heart disease": (101,),
    "Diabetes mellitus with complications": (50,),
    "Diabetes mellitus without complication": (49,),
    "Disorders of lipid metabolism": (53,),
    "Essential hypertension": (98,),
    "Fluid and electrolyte disorders": (55,),
    "Gastrointestinal hemorrhage": (153,),
    "Hypertension with complications and secondary hypertension": (99,),
    "Other liver diseases": (151,),
    "Other lower respiratory disease": (133,),
    "Other upper respiratory disease": (134,),
    "Pleurisy; pneumothorax; pulmonary collapse": (130,),
    "Pneumonia (except that caused by tuberculosis or sexually transmitted disease)": (122,),
    "Respiratory failure; insufficiency; arrest (adult)": (131,),
    "Septicemia (except in labor)": (2,),
    "Shock": (249,),
}
"""The 25 MedMod / mimic3-benchmarks phenotype labels and the CCS single-level categories of each."""
