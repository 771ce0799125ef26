//! Generated ADaM-like datasets with the shapes real studies have beyond the pilot's ADLBC:
//! vital signs with three positions and a derived average per visit, ECG with triplicate
//! readings, an average flagged by an analysis flag and a text-valued interpretation, and a
//! configurable shape for property tests (time points, averages, replicates, unscheduled
//! repeats, retests, text-valued parameters, missing order variables). Written as CSV.
#![allow(dead_code)]

/// What a generated dataset holds.
#[derive(Debug, Clone)]
pub struct Shape {
    /// Subjects per treatment arm.
    pub subjects_per_arm: usize,
    /// Treatment arms, in TRTAN order (listed in the file in reverse when `reverse_arms`).
    pub arms: Vec<&'static str>,
    /// Parameters: code, label (with unit), unit.
    pub parameters: Vec<(&'static str, &'static str, &'static str)>,
    /// Scheduled visits, in order.
    pub visits: Vec<&'static str>,
    /// Time points per visit (ATPT), none when empty.
    pub time_points: Vec<&'static str>,
    /// Replicate readings per time point (1: none).
    pub replicates: usize,
    /// A derived average record (DTYPE = AVERAGE) per subject × visit when there are several.
    pub average: bool,
    /// An analysis flag column with this name set to "Y" on the average records only.
    pub flag_on_average: Option<&'static str>,
    /// An unscheduled visit record for every fifth subject.
    pub unscheduled: bool,
    /// A retest of every seventh subject's visits: an earlier record with ANL01FL blank (the
    /// kept one has ANL01FL = Y).
    pub retests: bool,
    /// A text-valued parameter (AVAL empty, AVALC text), one record per visit.
    pub text_parameter: Option<(&'static str, &'static str)>,
    /// TRTAN and AVISITN columns.
    pub order_variables: bool,
    /// SAFFL column (all Y).
    pub safety_flag: bool,
    /// Arms first appear in the file in reverse order (TRTAN must still order them).
    pub reverse_arms: bool,
    /// Seed of the values.
    pub seed: u64,
}

/// A vital-signs-like set: SYSBP, DIABP, PULSE at three positions (lying, standing 1 and
/// 3 minutes) plus an average per visit; 84 subjects.
pub fn vital_signs() -> Shape {
    Shape {
        subjects_per_arm: 28,
        arms: vec!["Placebo", "Xanomeline Low Dose", "Xanomeline High Dose"],
        parameters: vec![
            ("SYSBP", "Systolic Blood Pressure (mmHg)", "mmHg"),
            ("DIABP", "Diastolic Blood Pressure (mmHg)", "mmHg"),
            ("PULSE", "Pulse Rate (beats/min)", "beats/min"),
        ],
        visits: vec!["Baseline", "Week 2", "Week 4", "Week 8", "Week 12"],
        time_points: vec![
            "AFTER LYING DOWN FOR 5 MINUTES",
            "AFTER STANDING FOR 1 MINUTE",
            "AFTER STANDING FOR 3 MINUTES",
        ],
        replicates: 1,
        average: true,
        flag_on_average: None,
        unscheduled: true,
        retests: false,
        text_parameter: None,
        order_variables: true,
        safety_flag: true,
        reverse_arms: false,
        seed: 11,
    }
}

/// An ECG-like set: QTcF (Fridericia, rederived), QTcB (Bazett) and heart rate in triplicate
/// plus an average flagged ANL02FL, and the ECG interpretation as text; no order variables.
pub fn ecg() -> Shape {
    Shape {
        subjects_per_arm: 20,
        arms: vec!["Placebo", "Xanomeline Low Dose", "Xanomeline High Dose"],
        parameters: vec![
            (
                "QTCFR",
                "QTcF - Fridericia's Correction Formula Rederived (ms)",
                "ms",
            ),
            (
                "QTCBR",
                "QTcB - Bazett's Correction Formula Rederived (ms)",
                "ms",
            ),
            ("EGHRMN", "ECG Mean Heart Rate (beats/min)", "beats/min"),
        ],
        visits: vec!["Baseline", "Week 2", "Week 8", "Week 16"],
        time_points: Vec::new(),
        replicates: 3,
        average: true,
        flag_on_average: Some("ANL02FL"),
        unscheduled: false,
        retests: false,
        text_parameter: Some(("EGINTP", "ECG Interpretation")),
        order_variables: false,
        safety_flag: true,
        reverse_arms: false,
        seed: 23,
    }
}

/// A tiny deterministic generator (SplitMix64).
struct Values(u64);

impl Values {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A value around `centre`, one decimal.
    fn around(&mut self, centre: f64) -> f64 {
        let spread = (self.next() % 400) as f64 / 10.0 - 20.0;
        ((centre + spread) * 10.0).round() / 10.0
    }
}

fn quote(text: &str) -> String {
    if text.contains([',', '"', '\n']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_owned()
    }
}

/// The dataset as CSV bytes.
pub fn csv(shape: &Shape) -> Vec<u8> {
    let mut values = Values(shape.seed);
    let mut header = vec!["STUDYID", "USUBJID"];
    if shape.safety_flag {
        header.push("SAFFL");
    }
    header.push("TRTA");
    if shape.order_variables {
        header.push("TRTAN");
    }
    header.extend(["PARAMCD", "PARAM", "AVISIT"]);
    if shape.order_variables {
        header.push("AVISITN");
    }
    if !shape.time_points.is_empty() {
        header.extend(["ATPT", "ATPTN"]);
    }
    if shape.replicates > 1 {
        header.push("EGREPNUM");
    }
    header.extend(["DTYPE", "AVAL", "AVALC", "AVALU", "ABLFL"]);
    if shape.retests {
        header.push("ANL01FL");
    }
    if let Some(flag) = shape.flag_on_average {
        header.push(flag);
    }
    let mut lines = vec![header.join(",")];
    let arm_order: Vec<usize> = if shape.reverse_arms {
        (0..shape.arms.len()).rev().collect()
    } else {
        (0..shape.arms.len()).collect()
    };
    let mut subject_number: usize = 0;
    for arm_index in arm_order {
        let arm = shape.arms[arm_index];
        for _ in 0..shape.subjects_per_arm {
            subject_number += 1;
            let subject = format!("01-{:03}-{:04}", 700 + arm_index, 1000 + subject_number);
            let mut row = |parameter: (&str, &str, &str),
                           visit_index: Option<usize>,
                           visit: &str,
                           time_point: Option<(usize, &str)>,
                           replicate: Option<usize>,
                           dtype: &str,
                           aval: Option<f64>,
                           avalc: &str,
                           analysis: (&str, &str)| {
                let mut cells = vec!["CDISCPILOT01".to_owned(), subject.clone()];
                if shape.safety_flag {
                    cells.push("Y".to_owned());
                }
                cells.push(quote(arm));
                if shape.order_variables {
                    cells.push(arm_index.to_string());
                }
                cells.extend([quote(parameter.0), quote(parameter.1), quote(visit)]);
                if shape.order_variables {
                    cells.push(match visit_index {
                        Some(i) => (i * 2).to_string(),
                        None => String::new(),
                    });
                }
                if !shape.time_points.is_empty() {
                    match time_point {
                        Some((n, label)) => cells.extend([quote(label), (n + 1).to_string()]),
                        None => cells.extend([String::new(), String::new()]),
                    }
                }
                if shape.replicates > 1 {
                    cells.push(replicate.map(|r| r.to_string()).unwrap_or_default());
                }
                cells.push(dtype.to_owned());
                cells.push(aval.map(|v| v.to_string()).unwrap_or_default());
                cells.push(quote(avalc));
                cells.push(quote(parameter.2));
                cells.push(if visit_index == Some(0) { "Y" } else { "" }.to_owned());
                if shape.retests {
                    cells.push(analysis.0.to_owned());
                }
                if shape.flag_on_average.is_some() {
                    cells.push(analysis.1.to_owned());
                }
                lines.push(cells.join(","));
            };
            for (p, parameter) in shape.parameters.iter().enumerate() {
                let typical = match parameter.0 {
                    "SYSBP" => 125.0,
                    "DIABP" => 78.0,
                    "PULSE" | "EGHRMN" => 72.0,
                    "QTCFR" => 410.0,
                    "QTCBR" => 420.0,
                    "WEIGHT" => 75.0,
                    _ => 60.0 + 40.0 * p as f64,
                };
                let centre = typical + 3.0 * arm_index as f64;
                for (v, visit) in shape.visits.iter().enumerate() {
                    let positions: Vec<Option<(usize, &str)>> = if shape.time_points.is_empty() {
                        vec![None]
                    } else {
                        shape
                            .time_points
                            .iter()
                            .copied()
                            .enumerate()
                            .map(Some)
                            .collect()
                    };
                    let several = positions.len() * shape.replicates > 1;
                    if shape.retests && subject_number.is_multiple_of(7) {
                        for position in &positions {
                            let value = values.around(centre);
                            row(
                                *parameter,
                                Some(v),
                                visit,
                                *position,
                                None,
                                "",
                                Some(value),
                                "",
                                ("", ""),
                            );
                        }
                    }
                    let mut readings = Vec::new();
                    for position in &positions {
                        for r in 0..shape.replicates {
                            let value = values.around(centre);
                            readings.push(value);
                            let replicate = (shape.replicates > 1).then_some(r + 1);
                            row(
                                *parameter,
                                Some(v),
                                visit,
                                *position,
                                replicate,
                                "",
                                Some(value),
                                "",
                                ("Y", ""),
                            );
                        }
                    }
                    if shape.average && several {
                        let mean = readings.iter().sum::<f64>() / readings.len() as f64;
                        let mean = (mean * 10.0).round() / 10.0;
                        row(
                            *parameter,
                            Some(v),
                            visit,
                            None,
                            None,
                            "AVERAGE",
                            Some(mean),
                            "",
                            ("Y", "Y"),
                        );
                    }
                }
                if shape.unscheduled && subject_number.is_multiple_of(5) {
                    let value = values.around(centre);
                    row(
                        *parameter,
                        None,
                        "Unscheduled 1.01",
                        None,
                        None,
                        "",
                        Some(value),
                        "",
                        ("", ""),
                    );
                }
            }
            if let Some((code, label)) = shape.text_parameter {
                for (v, visit) in shape.visits.iter().enumerate() {
                    let text = if values.next().is_multiple_of(5) {
                        "ABNORMAL"
                    } else {
                        "NORMAL"
                    };
                    row(
                        (code, label, ""),
                        Some(v),
                        visit,
                        None,
                        None,
                        "",
                        None,
                        text,
                        ("Y", ""),
                    );
                }
            }
        }
    }
    let mut text = lines.join("\n");
    text.push('\n');
    text.into_bytes()
}
