//! The live preview: an SVG boxplot drawn from the cell statistics the server computes (the
//! verifier's own), one panel per treatment and a box per visit, N under each box, low-N cells
//! drawn as the policy says and the unit on the y axis. It is labelled as a preview: the
//! verified plot is the PNG R draws.

use leptos::prelude::*;

use adamviz_model::draft::{Preview, PreviewCell};

const WIDTH: f64 = 960.0;
const HEIGHT: f64 = 420.0;
const LEFT: f64 = 64.0;
const RIGHT: f64 = 12.0;
const TOP: f64 = 40.0;
const BOTTOM: f64 = 96.0;
const PANEL_GAP: f64 = 14.0;

/// Up to about five round tick values covering `low..high`.
pub fn ticks(low: f64, high: f64) -> Vec<f64> {
    if !(low.is_finite() && high.is_finite()) || high <= low {
        return vec![low];
    }
    let raw = (high - low) / 4.0;
    let magnitude = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * magnitude)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * magnitude);
    let mut tick = (low / step).ceil() * step;
    let mut out = Vec::new();
    while tick <= high + step * 1e-9 && out.len() < 12 {
        out.push(tick);
        tick += step;
    }
    out
}

fn tick_text(value: f64) -> String {
    let text = format!("{value:.3}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    if text == "-0" {
        "0".to_owned()
    } else {
        text.to_owned()
    }
}

/// The range of the values a set of cells draws (whiskers, outliers and points).
fn range_of<'a>(cells: impl Iterator<Item = &'a PreviewCell>) -> Option<(f64, f64)> {
    let mut values = Vec::new();
    for cell in cells {
        values.extend(cell.statistics.min);
        values.extend(cell.statistics.max);
    }
    let low = values.iter().copied().reduce(f64::min)?;
    let high = values.iter().copied().reduce(f64::max)?;
    if (high - low).abs() < f64::EPSILON {
        Some((low - 1.0, high + 1.0))
    } else {
        let pad = (high - low) * 0.05;
        Some((low - pad, high + pad))
    }
}

/// How a cell is drawn under the low-N policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Drawn {
    Box,
    BoxMarkedLowN,
    PointsOnly,
    Nothing,
}

fn drawn(cell: &PreviewCell, action: &str) -> Drawn {
    if cell.statistics.n == 0 {
        return Drawn::Nothing;
    }
    if !cell.statistics.low_n {
        return Drawn::Box;
    }
    match action {
        "points_only" => Drawn::PointsOnly,
        "suppress_box" => Drawn::Nothing,
        _ => Drawn::BoxMarkedLowN,
    }
}

/// The preview plot.
#[component]
pub fn PreviewPlot(preview: Preview) -> impl IntoView {
    let panels = preview.panels.len().max(1) as f64;
    let panel_width = (WIDTH - LEFT - RIGHT - PANEL_GAP * (panels - 1.0)) / panels;
    let plot_height = HEIGHT - TOP - BOTTOM;
    let shared = range_of(preview.panels.iter().flat_map(|(_, cells)| cells.iter()));
    let panels_view = preview
        .panels
        .iter()
        .enumerate()
        .map(|(index, (treatment, cells))| {
            let range = if preview.free_scale {
                range_of(cells.iter())
            } else {
                shared
            };
            let (low, high) = range.unwrap_or((0.0, 1.0));
            let panel = Panel {
                x0: LEFT + index as f64 * (panel_width + PANEL_GAP),
                width: panel_width,
                height: plot_height,
                low,
                high,
            };
            let axis = index == 0 || preview.free_scale;
            panel_view(&panel, treatment, cells, axis, &preview.low_n_action)
        })
        .collect_view();
    view! {
        <figure class="preview">
            <figcaption>
                <strong>"Preview — not the verified plot."</strong>
                {if preview.free_scale {
                    " Free y-scales: this revision will be Experimental/Draft and will not be executed."
                } else {
                    " The verified plot is the PNG R draws when the revision runs."
                }}
            </figcaption>
            <svg
                viewBox=format!("0 0 {WIDTH} {HEIGHT}")
                role="img"
                aria-label=description(&preview)
                class="preview-plot"
                data-records=preview.records
            >
                <text x=WIDTH / 2.0 y="16" text-anchor="middle" class="plot-title">{preview.title.clone()}</text>
                <text
                    x="14"
                    y=TOP + plot_height / 2.0
                    text-anchor="middle"
                    transform=format!("rotate(-90 14 {})", TOP + plot_height / 2.0)
                    class="axis-label"
                >
                    {preview.y_label.clone()}
                </text>
                {panels_view}
            </svg>
            <p class="footnote">
                "N under each box: subjects (records, where they differ). " {footnote(&preview)}
            </p>
        </figure>
    }
}

/// What the plot shows, for a screen reader.
fn description(preview: &Preview) -> String {
    let low_n_cells = preview
        .panels
        .iter()
        .flat_map(|(_, cells)| cells.iter())
        .filter(|c| c.statistics.low_n)
        .count();
    let treatments: Vec<&str> = preview.panels.iter().map(|(t, _)| t.as_str()).collect();
    format!(
        "Preview boxplot of {} by visit, {} panels ({}), {} records, {} low-N cells",
        preview.y_label,
        preview.panels.len(),
        treatments.join(", "),
        preview.records,
        low_n_cells
    )
}

/// The footnote of the low-N policy.
fn footnote(preview: &Preview) -> String {
    let threshold = preview.low_n_threshold;
    match preview.low_n_action.as_str() {
        "points_only" => {
            format!("Cells with fewer than {threshold} subjects show their individual values only.")
        }
        "suppress_box" => {
            format!("Cells with fewer than {threshold} subjects are not drawn; their N is shown.")
        }
        _ => format!("Boxes marked \"low N\" have fewer than {threshold} subjects."),
    }
}

/// Where one treatment's panel is drawn and the values its y axis spans.
struct Panel {
    x0: f64,
    width: f64,
    height: f64,
    low: f64,
    high: f64,
}

impl Panel {
    /// The vertical position of `value`.
    fn y(&self, value: f64) -> f64 {
        TOP + self.height * (1.0 - (value - self.low) / (self.high - self.low))
    }
}

/// One treatment's panel: its frame, its y axis (`axis`: the first panel, or every panel with
/// free scales), its title and its cells.
fn panel_view(
    panel: &Panel,
    treatment: &str,
    cells: &[PreviewCell],
    axis: bool,
    action: &str,
) -> impl IntoView {
    let x0 = panel.x0;
    let axis = axis.then(|| {
        ticks(panel.low, panel.high)
            .into_iter()
            .map(|tick| {
                let at = panel.y(tick);
                view! {
                    <line x1=x0 - 4.0 x2=x0 + panel.width y1=at y2=at class="grid" />
                    <text x=x0 - 6.0 y=at + 4.0 text-anchor="end" class="tick">{tick_text(tick)}</text>
                }
            })
            .collect_view()
    });
    let band = panel.width / cells.len().max(1) as f64;
    let boxes = cells
        .iter()
        .enumerate()
        .map(|(slot, cell)| cell_view(panel, cell, x0 + band * (slot as f64 + 0.5), band, action))
        .collect_view();
    view! {
        <g class="panel">
            <rect x=x0 y=TOP width=panel.width height=panel.height class="panel-frame" />
            {axis}
            <text x=x0 + panel.width / 2.0 y=TOP - 8.0 text-anchor="middle" class="panel-title">{treatment.to_owned()}</text>
            {boxes}
        </g>
    }
}

/// One cell at `centre` in a band `band` wide: its box (or points, or nothing, by the low-N
/// policy), its tooltip, its N and its visit.
fn cell_view(
    panel: &Panel,
    cell: &PreviewCell,
    centre: f64,
    band: f64,
    action: &str,
) -> impl IntoView {
    let s = &cell.statistics;
    let body = cell_body(
        panel,
        cell,
        centre,
        (band * 0.3).min(28.0),
        drawn(cell, action),
    );
    let n_label = if s.n != s.n_subjects {
        format!("{} ({})", s.n_subjects, s.n)
    } else {
        s.n_subjects.to_string()
    };
    let label_y = TOP + panel.height + 14.0;
    let or_dash = |value: Option<f64>| value.map(tick_text).unwrap_or_else(|| "–".to_owned());
    let tooltip = format!(
        "{} · {}: n {} ({} subjects), median {}, Q1 {}, Q3 {}{}",
        s.treatment,
        s.visit,
        s.n,
        s.n_subjects,
        or_dash(s.median),
        or_dash(s.q1),
        or_dash(s.q3),
        if s.low_n { ", low N" } else { "" }
    );
    view! {
        <g class="cell">
            <title>{tooltip}</title>
            {body}
            <text x=centre y=label_y text-anchor="middle" class=if s.low_n { "n-label low" } else { "n-label" }>{n_label}</text>
            <text
                x=centre
                y=label_y + 14.0
                text-anchor="end"
                transform=format!("rotate(-35 {centre} {})", label_y + 14.0)
                class="visit-label"
            >
                {s.visit.clone()}
            </text>
        </g>
    }
}

/// What a cell draws as `shape`: a box (half `half` wide) with whiskers, outliers and perhaps
/// the low-N mark; its points; or nothing.
fn cell_body(
    panel: &Panel,
    cell: &PreviewCell,
    centre: f64,
    half: f64,
    shape: Drawn,
) -> Option<AnyView> {
    let s = &cell.statistics;
    match (shape, s.q1, s.median, s.q3) {
        (Drawn::Box | Drawn::BoxMarkedLowN, Some(q1), Some(median), Some(q3)) => {
            let (top, bottom) = (panel.y(q3), panel.y(q1));
            let whiskers = cell.whisker_low.zip(cell.whisker_high).map(|(lo, hi)| {
                view! {
                    <line x1=centre x2=centre y1=panel.y(hi) y2=top class="whisker" />
                    <line x1=centre x2=centre y1=bottom y2=panel.y(lo) class="whisker" />
                }
            });
            let outliers = cell
                .outliers
                .iter()
                .map(|v| view! { <circle cx=centre cy=panel.y(*v) r="2" class="outlier" /> })
                .collect_view();
            let mark = (shape == Drawn::BoxMarkedLowN).then(|| view! {
                <text x=centre y=panel.y(s.max.unwrap_or(q3)) - 6.0 text-anchor="middle" class="low-n-mark">"low N"</text>
            });
            Some(view! {
                {whiskers}
                <rect x=centre - half y=top width=half * 2.0 height=(bottom - top).max(1.0) class="box" />
                <line x1=centre - half x2=centre + half y1=panel.y(median) y2=panel.y(median) class="median" />
                {outliers}
                {mark}
            }.into_any())
        }
        (Drawn::PointsOnly, ..) => Some(
            cell.points
                .iter()
                .map(|v| view! { <circle cx=centre cy=panel.y(*v) r="3" class="point" /> })
                .collect_view()
                .into_any(),
        ),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round_and_cover_the_range() {
        assert_eq!(ticks(0.0, 100.0), vec![0.0, 25.0, 50.0, 75.0, 100.0]);
        assert_eq!(ticks(3.2, 9.9), vec![4.0, 6.0, 8.0]);
        assert_eq!(tick_text(2.5), "2.5");
        assert_eq!(tick_text(40.0), "40");
    }
}
