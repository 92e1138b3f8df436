"""EHR-shaped texts (invented, no patient data) and their token counts by the real Qwen2.5 tokenizer,
measured once with llama-cpp-python 0.3.36 (``POST /extras/tokenize/count``) serving
Qwen2.5-Coder-0.5B-Instruct: the calibration of ``clinseek.models.estimate_tokens``."""

from __future__ import annotations

SAMPLES: dict[str, str] = {
    'timeline_labs': '## Labevents [2180-07-23 06:15:00]\n- label: Glucose; valuenum: 141; valueuom: mg/dL; ref_range_lower: 70; ref_range_upper: 100; flag: abnormal\n- label: Potassium; valuenum: 3.9; valueuom: mEq/L; ref_range_lower: 3.3; ref_range_upper: 5.1\n- label: Creatinine; valuenum: 1.4; valueuom: mg/dL; ref_range_lower: 0.5; ref_range_upper: 1.2; flag: abnormal',
    'timeline_meds': '## Emar [2180-07-22 21:04:00]\n- medication: Heparin; event_txt: Administered; scheduletime: 2180-07-22 21:00:00\n- medication: Insulin Glargine; event_txt: Not Given; scheduletime: 2180-07-22 21:00:00\n\n## Prescriptions [2180-07-22 14:31:00]\n- drug: Sodium Chloride 0.9%  Flush; dose_val_rx: 3; dose_unit_rx: mL; route: IV; doses_per_24_hrs: 3',
    'sql_table': 'charttime           | itemid | valuenum\n2180-07-23 12:00:00 | 50912  | 1.4\n2180-07-23 06:15:00 | 50931  | 141.0\n2180-07-22 23:40:00 | 50971  | 3.9\n2180-07-22 18:02:00 | 51222  | 10.2\n2180-07-22 18:02:00 | 51301  | 12.7\n(5 rows)',
    'tool_schema': '[{"type": "function", "function": {"name": "ehr__run_sql_query", "description": "Run one read-only DuckDB SQL query on this patient\'s records up to the current time.", "parameters": {"type": "object", "properties": {"sql_query": {"type": "string"}}, "required": ["sql_query"]}}}]',
    'prose': 'The patient is a 67-year-old woman admitted through the emergency department with shortness of breath. She was started on intravenous diuretics and her oxygen requirement improved over the first two days of the admission.',
    'candidates': '["Acetaminophen", "Heparin", "Insulin Glargine", "Metoprolol Tartrate", "Ondansetron", "Pantoprazole", "Potassium Chloride", "Sodium Chloride 0.9%  Flush", "Vancomycin", "Zolpidem Tartrate"]',
    'ids_and_codes': 'subject_id: 10000032; hadm_id: 22595853; stay_id: 39553978; icd_code: I5023; icd_version: 10; drg_code: 291; ndc: 00409488820',
    'vitals': '## Omr [2180-05-06 00:00:00]\n- result_name: Blood Pressure; result_value: 110/65\n- result_name: Weight (Lbs); result_value: 94.1\n- result_name: BMI (kg/m2); result_value: 18.0\n- result_name: Height (Inches); result_value: 60',
}

QWEN25_COUNTS: dict[str, int] = {
    'timeline_labs': 150,
    'timeline_meds': 166,
    'sql_table': 183,
    'tool_schema': 75,
    'prose': 44,
    'candidates': 75,
    'ids_and_codes': 82,
    'vitals': 94,
}
"""Token counts of ``SAMPLES`` by the Qwen2.5 tokenizer (no special tokens)."""
