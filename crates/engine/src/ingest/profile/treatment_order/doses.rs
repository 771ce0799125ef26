//! The order treatment labels give by themselves: placebo or control first, then doses
//! ascending ("Drug 54 mg" before "Drug 81 mg", "Xanomeline Low Dose" before "… High Dose"),
//! then any other level in order of first appearance.

/// Words that mark a control arm (a whole word of the label, any case).
const CONTROL_WORDS: [&str; 5] = ["placebo", "pbo", "vehicle", "sham", "control"];

/// Dose words, lowest first, read only next to the word "dose".
const DOSE_WORDS: [(&str, f64); 5] = [
    ("low", 1.0),
    ("medium", 2.0),
    ("mid", 2.0),
    ("middle", 2.0),
    ("high", 3.0),
];

/// Levels in the order their labels give, and that order in words.
pub(super) struct LabelOrder<'a> {
    /// The levels, ordered.
    pub(super) levels: Vec<&'a str>,
    /// "Placebo first, then doses ascending (54 mg, 81 mg)".
    pub(super) steps: String,
}

/// A dose read from a label.
#[derive(Debug, Clone, PartialEq)]
struct Dose {
    /// What the amount is measured in; doses compare only within one scale ("mass/kg",
    /// "mass/", "words").
    scale: String,
    /// The amount in the scale's base unit (milligrams for a mass), or the rank of a dose word.
    amount: f64,
    /// The dose as the label writes it: "54 mg", "Low".
    shown: String,
}

/// Placebo or control first and doses ascending, when the labels (in order of first appearance)
/// name a control or at least two comparable doses; `None` when they give no order.
pub(super) fn placebo_and_doses<'a>(labels: &[&'a str]) -> Option<LabelOrder<'a>> {
    let doses: Vec<Option<Dose>> = labels.iter().map(|label| dose_in(label)).collect();
    let is_control: Vec<bool> = labels
        .iter()
        .zip(&doses)
        .map(|(label, dose)| {
            has_control_word(label) && dose.as_ref().is_none_or(|d| d.amount == 0.0)
        })
        .collect();
    let dosed: Vec<usize> = (0..labels.len())
        .filter(|&i| !is_control[i] && doses[i].is_some())
        .collect();
    // Doses order the levels only when they are comparable: one scale for every dosed level.
    let first_scale = dosed
        .first()
        .and_then(|&i| doses[i].as_ref())
        .map(|d| &d.scale);
    let comparable = dosed.len() >= 2
        && dosed
            .iter()
            .all(|&i| doses[i].as_ref().map(|d| &d.scale) == first_scale);
    let controls: Vec<usize> = (0..labels.len()).filter(|&i| is_control[i]).collect();
    if controls.is_empty() && !comparable {
        return None;
    }
    let mut ascending: Vec<usize> = if comparable { dosed } else { Vec::new() };
    let amount = |i: usize| doses[i].as_ref().map_or(0.0, |d| d.amount);
    ascending.sort_by(|&a, &b| amount(a).total_cmp(&amount(b)));
    let others: Vec<usize> = (0..labels.len())
        .filter(|i| !controls.contains(i) && !ascending.contains(i))
        .collect();
    let mut steps = Vec::new();
    if !controls.is_empty() {
        let names: Vec<&str> = controls.iter().map(|&i| labels[i]).collect();
        steps.push(format!("{} first", names.join(", ")));
    }
    if !ascending.is_empty() {
        let shown: Vec<&str> = ascending
            .iter()
            .filter_map(|&i| doses[i].as_ref().map(|d| d.shown.as_str()))
            .collect();
        steps.push(format!("doses ascending ({})", shown.join(", ")));
    }
    if !others.is_empty() {
        steps.push("the others in order of first appearance".to_owned());
    }
    Some(LabelOrder {
        levels: controls
            .iter()
            .chain(&ascending)
            .chain(&others)
            .map(|&i| labels[i])
            .collect(),
        steps: steps.join(", then "),
    })
}

/// The label's words, as written.
fn words(label: &str) -> impl Iterator<Item = &str> {
    label
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
}

fn has_control_word(label: &str) -> bool {
    words(label).any(|w| CONTROL_WORDS.iter().any(|c| w.eq_ignore_ascii_case(c)))
}

/// The first dose of a label: a number with a unit ("54 mg", "0.5mg/kg", "1 %"), else a dose
/// word beside "dose" ("Low Dose").
fn dose_in(label: &str) -> Option<Dose> {
    amount_with_unit(label).or_else(|| {
        let has_dose_word = words(label).any(|w| w.eq_ignore_ascii_case("dose"));
        has_dose_word
            .then(|| {
                words(label).find_map(|w| {
                    DOSE_WORDS
                        .iter()
                        .find(|(word, _)| w.eq_ignore_ascii_case(word))
                        .map(|(_, rank)| Dose {
                            scale: "words".to_owned(),
                            amount: *rank,
                            shown: w.to_owned(),
                        })
                })
            })
            .flatten()
    })
}

/// The first number followed by a known unit. A number glued to a word before it ("Study301")
/// or without a unit ("Cohort 2") is not a dose.
fn amount_with_unit(label: &str) -> Option<Dose> {
    let chars: Vec<(usize, char)> = label.char_indices().collect();
    let byte_at = |i: usize| chars.get(i).map_or(label.len(), |(b, _)| *b);
    let mut i = 0;
    while i < chars.len() {
        let starts_number =
            chars[i].1.is_ascii_digit() && (i == 0 || !chars[i - 1].1.is_alphanumeric());
        if !starts_number {
            i += 1;
            continue;
        }
        let mut end = i;
        while end < chars.len()
            && (chars[end].1.is_ascii_digit()
                || (chars[end].1 == '.'
                    && chars.get(end + 1).is_some_and(|(_, c)| c.is_ascii_digit())))
        {
            end += 1;
        }
        let mut unit_start = end;
        while chars.get(unit_start).is_some_and(|(_, c)| *c == ' ') {
            unit_start += 1;
        }
        let mut unit_end = unit_start;
        while chars
            .get(unit_end)
            .is_some_and(|(_, c)| c.is_alphanumeric() || matches!(c, '/' | '%'))
        {
            unit_end += 1;
        }
        let number = &label[byte_at(i)..byte_at(end)];
        let unit = &label[byte_at(unit_start)..byte_at(unit_end)];
        if let (Ok(value), Some((scale, factor))) = (number.parse::<f64>(), unit_scale(unit)) {
            return Some(Dose {
                scale,
                amount: value * factor,
                shown: format!("{number} {unit}"),
            });
        }
        i = end;
    }
    None
}

/// The scale of a unit and the factor to its base: mg, µg and g are one mass scale (in mg), a
/// per-part ("/kg", "/m2") makes its own scale.
fn unit_scale(unit: &str) -> Option<(String, f64)> {
    let lower = unit.to_lowercase();
    let (numerator, per) = lower.split_once('/').unwrap_or((lower.as_str(), ""));
    let (kind, factor) = match numerator {
        "ng" => ("mass", 1e-6),
        "ug" | "µg" | "μg" | "mcg" => ("mass", 1e-3),
        "mg" => ("mass", 1.0),
        "g" => ("mass", 1e3),
        "ml" => ("volume", 1.0),
        "l" => ("volume", 1e3),
        "iu" | "u" | "unit" | "units" => ("units", 1.0),
        "%" => ("percent", 1.0),
        _ => return None,
    };
    Some((format!("{kind}/{per}"), factor))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn order(labels: &[&'static str]) -> Option<(Vec<&'static str>, String)> {
        placebo_and_doses(labels).map(|o| (o.levels, o.steps))
    }

    #[test]
    fn doses_are_read_with_their_units_and_compared_within_one_scale() {
        let dose = |label| dose_in(label).map(|d| (d.scale, d.amount, d.shown));
        assert_eq!(
            dose("Drug 54 mg"),
            Some(("mass/".into(), 54.0, "54 mg".into()))
        );
        assert_eq!(
            dose("Drug 0.5mg/kg QD"),
            Some(("mass/kg".into(), 0.5, "0.5 mg/kg".into()))
        );
        assert_eq!(
            dose("Drug 500 µg"),
            Some(("mass/".into(), 0.5, "500 µg".into()))
        );
        assert_eq!(
            dose("Xanomeline Low Dose"),
            Some(("words".into(), 1.0, "Low".into()))
        );
        // A number without a unit, or glued to a word, is no dose; "High" without "dose" is not
        // a dose word.
        assert_eq!(dose("Cohort 2"), None);
        assert_eq!(dose("Study301 mg"), None);
        assert_eq!(dose("High risk"), None);
    }

    #[test]
    fn placebo_first_then_doses_ascending_then_the_rest() {
        assert_eq!(
            order(&["Drug 81 mg", "Placebo", "Drug 54 mg"]),
            Some((
                vec!["Placebo", "Drug 54 mg", "Drug 81 mg"],
                "Placebo first, then doses ascending (54 mg, 81 mg)".to_owned()
            ))
        );
        // Grams and milligrams are one scale.
        assert_eq!(
            order(&["Drug 1 g", "Drug 250 mg", "Vehicle"]).unwrap().0,
            ["Vehicle", "Drug 250 mg", "Drug 1 g"]
        );
        // A level without a dose comes after the doses, in order of first appearance.
        assert_eq!(
            order(&["Comparator", "Drug 20 mg", "Control", "Drug 10 mg"]),
            Some((
                vec!["Control", "Drug 10 mg", "Drug 20 mg", "Comparator"],
                "Control first, then doses ascending (10 mg, 20 mg), then the others in order of first appearance".to_owned()
            ))
        );
        assert_eq!(
            order(&["Xanomeline High Dose", "Placebo", "Xanomeline Low Dose"])
                .unwrap()
                .0,
            ["Placebo", "Xanomeline Low Dose", "Xanomeline High Dose"]
        );
    }

    #[test]
    fn labels_without_a_control_or_comparable_doses_give_no_order() {
        assert_eq!(order(&["Drug A", "Drug B"]), None);
        // One dose alone, or doses in scales that do not compare, order nothing.
        assert_eq!(order(&["Drug A", "Drug B 10 mg"]), None);
        assert_eq!(order(&["Drug 10 mg/kg", "Drug 20 mg"]), None);
        // A control with incomparable doses: the control first, the rest as they came.
        assert_eq!(
            order(&["Drug 10 mg/kg", "Placebo", "Drug 20 mg"]),
            Some((
                vec!["Placebo", "Drug 10 mg/kg", "Drug 20 mg"],
                "Placebo first, then the others in order of first appearance".to_owned()
            ))
        );
    }
}
