//! SVG chart primitives for the HTML report: scales (linear, log), axes with units, grouped
//! bars, lines, heat-map grids and legends, each followed by a table of the plotted numbers.
//! Plain strings, no scripts, so the report opens from disk with no network.

use std::fmt::Write;

/// Plot-area fill; the browser test finds charts by this exact colour, so keep them in step.
pub const PLOT_BACKGROUND: &str = "#f4f6fa";
/// Series colours (Tableau 10): distinct in print and for most colour-vision deficiencies.
const PALETTE: [&str; 10] = [
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
    "#9c755f", "#bab0ac",
];
/// Outline of a highlighted (bottleneck) bar or cell.
const HIGHLIGHT: &str = "#d62728";

const WIDTH: f64 = 960.0;
const MARGIN_LEFT: f64 = 84.0;
const MARGIN_RIGHT: f64 = 24.0;
const MARGIN_TOP: f64 = 16.0;
const MARGIN_BOTTOM: f64 = 64.0;
const LEGEND_ROW: f64 = 18.0;
const LEGEND_COLUMN: f64 = 220.0;
const TICK_TARGET: usize = 6;
/// Widest advance of a character in tick labels (`.tick`, 11 px sans-serif: DejaVu Sans, the
/// widest common default, averages about 6.6 px on these labels), so a line never overflows.
const TICK_CHAR_WIDTH: f64 = 7.0;
/// Distance between the lines of a wrapped tick label (11 px text plus leading).
const TICK_LINE_HEIGHT: f64 = 13.0;
/// Lines a category label may wrap to before its last line is cut with an ellipsis.
const MAX_LABEL_LINES: usize = 3;

/// Escapes text for HTML/SVG content and attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

fn colour(index: usize) -> &'static str {
    PALETTE[index % PALETTE.len()]
}

/// Lines beyond the palette repeat its colours with a dash pattern so they stay distinct.
fn dash(index: usize) -> &'static str {
    match index / PALETTE.len() % 3 {
        0 => "",
        1 => " stroke-dasharray=\"6 3\"",
        _ => " stroke-dasharray=\"2 2\"",
    }
}

/// How an axis maps values to the plot.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scale {
    Linear,
    /// Logarithmic with ticks at powers of `base` (2 for sizes and depths, 10 for latency).
    Log {
        base: f64,
    },
}

/// An axis: its label with unit, scale, and how tick values are written.
pub struct Axis {
    pub label: String,
    pub scale: Scale,
    pub format: fn(f64) -> String,
}

/// A value range mapped onto pixels.
struct Mapped {
    scale: Scale,
    low: f64,
    high: f64,
    pixel_low: f64,
    pixel_high: f64,
}

impl Mapped {
    fn new(scale: Scale, values: impl Iterator<Item = f64>, pixels: (f64, f64)) -> Self {
        let (mut low, mut high) = values
            .filter(|v| v.is_finite() && (scale == Scale::Linear || *v > 0.0))
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
                (lo.min(v), hi.max(v))
            });
        if !low.is_finite() {
            (low, high) = (1.0, 10.0);
        }
        match scale {
            Scale::Linear => {
                // Bars and rates start at zero so heights compare honestly.
                low = low.min(0.0);
                if high <= low {
                    high = low + 1.0;
                }
                let step = nice_step((high - low) / TICK_TARGET as f64);
                high = (high / step).ceil() * step;
            }
            Scale::Log { base } => {
                low = base.powf(low.log(base).floor());
                high = base.powf(high.log(base).ceil());
                if high <= low {
                    high = low * base;
                }
            }
        }
        Self {
            scale,
            low,
            high,
            pixel_low: pixels.0,
            pixel_high: pixels.1,
        }
    }

    fn to_pixel(&self, value: f64) -> f64 {
        let fraction = match self.scale {
            Scale::Linear => (value - self.low) / (self.high - self.low),
            Scale::Log { .. } => {
                let value = value.max(self.low);
                (value.ln() - self.low.ln()) / (self.high.ln() - self.low.ln())
            }
        };
        self.pixel_low + fraction * (self.pixel_high - self.pixel_low)
    }

    fn ticks(&self) -> Vec<f64> {
        match self.scale {
            Scale::Linear => {
                let step = nice_step((self.high - self.low) / TICK_TARGET as f64);
                let count = ((self.high - self.low) / step).round() as usize;
                (0..=count).map(|i| self.low + step * i as f64).collect()
            }
            Scale::Log { base } => {
                let decades = (self.high / self.low).log(base).round() as usize;
                // Thin dense log axes (1 B .. 1 GiB) to about TICK_TARGET labels.
                let every = decades.div_ceil(TICK_TARGET * 2).max(1);
                (0..=decades)
                    .step_by(every)
                    .map(|i| self.low * base.powi(i as i32))
                    .collect()
            }
        }
    }
}

/// 1, 2 or 5 times a power of ten, at least `raw`.
fn nice_step(raw: f64) -> f64 {
    if !(raw.is_finite() && raw > 0.0) {
        return 1.0;
    }
    let power = 10f64.powf(raw.log10().floor());
    let fraction = raw / power;
    let nice = if fraction <= 1.0 {
        1.0
    } else if fraction <= 2.0 {
        2.0
    } else if fraction <= 5.0 {
        5.0
    } else {
        10.0
    };
    nice * power
}

/// A chart being written: title, SVG body and the table beneath it.
pub struct Figure {
    pub title: String,
    pub svg: String,
    pub table: Table,
}

/// The numbers of a chart as rows under a header.
pub struct Table {
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

impl Figure {
    /// The figure as HTML: title, chart, then its table.
    pub fn to_html(&self, out: &mut String) {
        let _ = write!(
            out,
            "<figure class=\"chart\"><figcaption>{}</figcaption>\n{}\n<table><thead><tr>",
            escape(&self.title),
            self.svg
        );
        for cell in &self.table.header {
            let _ = write!(out, "<th>{}</th>", escape(cell));
        }
        out.push_str("</tr></thead><tbody>\n");
        for row in &self.table.rows {
            out.push_str("<tr>");
            for (index, cell) in row.iter().enumerate() {
                let tag = if index == 0 { "th" } else { "td" };
                let _ = write!(out, "<{tag}>{}</{tag}>", escape(cell));
            }
            out.push_str("</tr>\n");
        }
        out.push_str("</tbody></table></figure>\n");
    }
}

fn svg_open(out: &mut String, height: f64, title: &str) {
    let _ = write!(
        out,
        "<svg class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"{height:.0}\" viewBox=\"0 0 {WIDTH} {height:.0}\" role=\"img\"><title>{}</title>",
        escape(title)
    );
}

fn legend(out: &mut String, labels: &[String], top: f64, line: bool) -> f64 {
    let per_row = ((WIDTH - MARGIN_LEFT) / LEGEND_COLUMN).floor().max(1.0) as usize;
    for (index, label) in labels.iter().enumerate() {
        let x = MARGIN_LEFT + (index % per_row) as f64 * LEGEND_COLUMN;
        let y = top + (index / per_row) as f64 * LEGEND_ROW;
        if line {
            let _ = write!(
                out,
                "<line x1=\"{x:.1}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\" stroke=\"{}\" stroke-width=\"3\"{}/>",
                y + 6.0,
                x + 14.0,
                y + 6.0,
                colour(index),
                dash(index)
            );
        } else {
            let _ = write!(
                out,
                "<rect x=\"{x:.1}\" y=\"{y:.1}\" width=\"12\" height=\"12\" fill=\"{}\"/>",
                colour(index)
            );
        }
        let _ = write!(
            out,
            "<text x=\"{:.1}\" y=\"{:.1}\" class=\"legend\">{}</text>",
            x + 18.0,
            y + 10.0,
            escape(label)
        );
    }
    labels.len().div_ceil(per_row) as f64 * LEGEND_ROW
}

fn legend_height(count: usize) -> f64 {
    let per_row = ((WIDTH - MARGIN_LEFT) / LEGEND_COLUMN).floor().max(1.0) as usize;
    count.div_ceil(per_row) as f64 * LEGEND_ROW
}

fn plot_frame(out: &mut String, left: f64, top: f64, right: f64, bottom: f64) {
    let _ = write!(
        out,
        "<rect class=\"plot\" x=\"{left:.1}\" y=\"{top:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"{PLOT_BACKGROUND}\"/>",
        right - left,
        bottom - top
    );
}

fn y_axis(out: &mut String, mapped: &Mapped, axis: &Axis, left: f64, right: f64) {
    for tick in mapped.ticks() {
        let y = mapped.to_pixel(tick);
        let _ = write!(
            out,
            "<line x1=\"{left:.1}\" y1=\"{y:.1}\" x2=\"{right:.1}\" y2=\"{y:.1}\" class=\"grid\"/><text x=\"{:.1}\" y=\"{:.1}\" class=\"tick\" text-anchor=\"end\">{}</text>",
            left - 6.0,
            y + 4.0,
            escape(&(axis.format)(tick))
        );
    }
    let middle = (mapped.pixel_low + mapped.pixel_high) / 2.0;
    let _ = write!(
        out,
        "<text class=\"axis\" transform=\"translate(16 {middle:.1}) rotate(-90)\" text-anchor=\"middle\">{}</text>",
        escape(&axis.label)
    );
}

/// The axis title under the plot; `bottom` is where the tick labels above it end, less the
/// first line's (a chart with wrapped category labels passes its bottom moved down).
fn x_axis_label(out: &mut String, label: &str, bottom: f64) {
    let _ = write!(
        out,
        "<text class=\"axis\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
        (MARGIN_LEFT + WIDTH - MARGIN_RIGHT) / 2.0,
        bottom + 44.0,
        escape(label)
    );
}

/// Vertical bars: one group per category, one bar per series within it.
pub struct BarChart {
    pub title: String,
    pub category_label: String,
    pub y: Axis,
    pub categories: Vec<String>,
    /// (series label, value per category; `None` where the series has no bar).
    pub series: Vec<(String, Vec<Option<f64>>)>,
}

impl BarChart {
    pub fn render(&self) -> Figure {
        const PLOT_HEIGHT: f64 = 300.0;
        let (left, right) = (MARGIN_LEFT, WIDTH - MARGIN_RIGHT);
        let group_width = (right - left) / self.categories.len().max(1) as f64;
        // Long job names (`cdm/4K QD32,rw=randwrite`) wrap at their separators into lines
        // that fit under their group, rather than run into the next group's label.
        let line_chars = (group_width / TICK_CHAR_WIDTH) as usize;
        let category_lines: Vec<Vec<String>> = self
            .categories
            .iter()
            .map(|category| wrap_label(category, line_chars, MAX_LABEL_LINES))
            .collect();
        let extra_lines = category_lines.iter().map(Vec::len).max().unwrap_or(1) - 1;
        let labels_extra = extra_lines as f64 * TICK_LINE_HEIGHT;
        let legend_top = MARGIN_TOP + PLOT_HEIGHT + MARGIN_BOTTOM + labels_extra;
        let height = legend_top + legend_height(self.series.len()) + 8.0;
        let (top, bottom) = (MARGIN_TOP, MARGIN_TOP + PLOT_HEIGHT);
        let mut svg = String::new();
        svg_open(&mut svg, height, &self.title);
        plot_frame(&mut svg, left, top, right, bottom);
        let values = self
            .series
            .iter()
            .flat_map(|(_, v)| v.iter().flatten().copied());
        let mapped = Mapped::new(Scale::Linear, values, (bottom, top));
        y_axis(&mut svg, &mapped, &self.y, left, right);
        let bar_width = group_width * 0.8 / self.series.len().max(1) as f64;
        for (group, (category, lines)) in self.categories.iter().zip(&category_lines).enumerate() {
            let group_left = left + group as f64 * group_width;
            for (index, (label, values)) in self.series.iter().enumerate() {
                let Some(value) = values.get(group).copied().flatten() else {
                    continue;
                };
                let x = group_left + group_width * 0.1 + index as f64 * bar_width;
                let y = mapped.to_pixel(value);
                let _ = write!(
                    svg,
                    "<rect class=\"bar\" x=\"{x:.1}\" y=\"{y:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"{}\"><title>{}: {}</title></rect>",
                    (bar_width - 1.0).max(1.0),
                    (bottom - y).max(0.0),
                    colour(index),
                    escape(&format!("{category} / {label}")),
                    escape(&(self.y.format)(value))
                );
            }
            let x = group_left + group_width / 2.0;
            let _ = write!(
                svg,
                "<text class=\"tick\" x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\"><title>{}</title>",
                bottom + 16.0,
                escape(category)
            );
            for (index, line) in lines.iter().enumerate() {
                let dy = if index == 0 { 0.0 } else { TICK_LINE_HEIGHT };
                let _ = write!(
                    svg,
                    "<tspan x=\"{x:.1}\" dy=\"{dy:.1}\">{}</tspan>",
                    escape(line)
                );
            }
            svg.push_str("</text>");
        }
        x_axis_label(&mut svg, &self.category_label, bottom + labels_extra);
        let labels: Vec<String> = self.series.iter().map(|(l, _)| l.clone()).collect();
        legend(&mut svg, &labels, legend_top, false);
        svg.push_str("</svg>");
        let mut header = vec![self.category_label.clone()];
        header.extend(labels.iter().map(|l| format!("{l} ({})", self.y.label)));
        let rows = self
            .categories
            .iter()
            .enumerate()
            .map(|(group, category)| {
                let mut row = vec![category.clone()];
                row.extend(self.series.iter().map(|(_, values)| {
                    values
                        .get(group)
                        .copied()
                        .flatten()
                        .map_or_else(|| "–".into(), self.y.format)
                }));
                row
            })
            .collect();
        Figure {
            title: self.title.clone(),
            svg,
            table: Table { header, rows },
        }
    }
}

/// Horizontal bars with some bars outlined (the bottleneck), one row per category.
pub struct HorizontalBarChart {
    pub title: String,
    pub category_label: String,
    pub x: Axis,
    pub categories: Vec<String>,
    pub series: Vec<(String, Vec<Option<f64>>)>,
    /// (category, series) pairs to outline, with the legend text explaining the outline.
    pub highlighted: Vec<(usize, usize)>,
    pub highlight_meaning: String,
}

impl HorizontalBarChart {
    pub fn render(&self) -> Figure {
        const BAR_HEIGHT: f64 = 12.0;
        const ROW_GAP: f64 = 8.0;
        let left = 150.0;
        let right = WIDTH - MARGIN_RIGHT - 70.0;
        let row_height = BAR_HEIGHT * self.series.len().max(1) as f64 + ROW_GAP;
        let top = MARGIN_TOP;
        let bottom = top + row_height * self.categories.len().max(1) as f64;
        let legend_top = bottom + MARGIN_BOTTOM;
        let legend_rows = legend_height(self.series.len() + 1);
        let height = legend_top + legend_rows + 8.0;
        let mut svg = String::new();
        svg_open(&mut svg, height, &self.title);
        plot_frame(&mut svg, left, top, right, bottom);
        let values = self
            .series
            .iter()
            .flat_map(|(_, v)| v.iter().flatten().copied());
        let mapped = Mapped::new(Scale::Linear, values, (left, right));
        for tick in mapped.ticks() {
            let x = mapped.to_pixel(tick);
            let _ = write!(
                svg,
                "<line x1=\"{x:.1}\" y1=\"{top:.1}\" x2=\"{x:.1}\" y2=\"{bottom:.1}\" class=\"grid\"/><text x=\"{x:.1}\" y=\"{:.1}\" class=\"tick\" text-anchor=\"middle\">{}</text>",
                bottom + 16.0,
                escape(&(self.x.format)(tick))
            );
        }
        for (row, category) in self.categories.iter().enumerate() {
            let row_top = top + ROW_GAP / 2.0 + row as f64 * row_height;
            let _ = write!(
                svg,
                "<text class=\"tick\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
                left - 6.0,
                row_top + row_height / 2.0,
                escape(category)
            );
            for (index, (label, values)) in self.series.iter().enumerate() {
                let Some(value) = values.get(row).copied().flatten() else {
                    continue;
                };
                let y = row_top + index as f64 * BAR_HEIGHT;
                let width = (mapped.to_pixel(value) - left).max(1.0);
                let outlined = self.highlighted.contains(&(row, index));
                let stroke = if outlined {
                    format!(" stroke=\"{HIGHLIGHT}\" stroke-width=\"2.5\"")
                } else {
                    String::new()
                };
                let _ = write!(
                    svg,
                    "<rect class=\"bar\" x=\"{left:.1}\" y=\"{y:.1}\" width=\"{width:.1}\" height=\"{:.1}\" fill=\"{}\"{stroke}><title>{}: {}</title></rect>",
                    BAR_HEIGHT - 2.0,
                    colour(index),
                    escape(&format!("{category} / {label}")),
                    escape(&(self.x.format)(value))
                );
                if outlined {
                    let _ = write!(
                        svg,
                        "<text class=\"mark\" x=\"{:.1}\" y=\"{:.1}\" fill=\"{HIGHLIGHT}\">◀ {}</text>",
                        left + width + 6.0,
                        y + BAR_HEIGHT - 3.0,
                        escape(&self.highlight_meaning)
                    );
                }
            }
        }
        let _ = write!(
            svg,
            "<text class=\"axis\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
            (left + right) / 2.0,
            bottom + 40.0,
            escape(&self.x.label)
        );
        let labels: Vec<String> = self.series.iter().map(|(l, _)| l.clone()).collect();
        let used = legend(&mut svg, &labels, legend_top, false);
        let _ = write!(
            svg,
            "<rect x=\"{MARGIN_LEFT}\" y=\"{:.1}\" width=\"12\" height=\"12\" fill=\"none\" stroke=\"{HIGHLIGHT}\" stroke-width=\"2.5\"/><text class=\"legend\" x=\"{:.1}\" y=\"{:.1}\">outlined: {}</text>",
            legend_top + used,
            MARGIN_LEFT + 18.0,
            legend_top + used + 10.0,
            escape(&self.highlight_meaning)
        );
        svg.push_str("</svg>");
        let mut header = vec![self.category_label.clone()];
        header.extend(labels.iter().map(|l| format!("{l} ({})", self.x.label)));
        let rows = self
            .categories
            .iter()
            .enumerate()
            .map(|(row, category)| {
                let mut cells = vec![category.clone()];
                cells.extend(self.series.iter().enumerate().map(|(index, (_, values))| {
                    let text = values
                        .get(row)
                        .copied()
                        .flatten()
                        .map_or_else(|| "–".into(), self.x.format);
                    if self.highlighted.contains(&(row, index)) {
                        format!("{text} ({})", self.highlight_meaning)
                    } else {
                        text
                    }
                }));
                cells
            })
            .collect();
        Figure {
            title: self.title.clone(),
            svg,
            table: Table { header, rows },
        }
    }
}

/// Lines through (x, y) points, with optional labelled vertical markers.
pub struct LineChart {
    pub title: String,
    pub x: Axis,
    pub y: Axis,
    pub series: Vec<(String, Vec<(f64, f64)>)>,
    /// (x, label) of vertical dashed markers, e.g. where one sweep point ends.
    pub markers: Vec<(f64, String)>,
    /// Rows of the table (the caller knows how to tabulate its points best).
    pub table: Table,
}

impl LineChart {
    pub fn render(self) -> Figure {
        const PLOT_HEIGHT: f64 = 300.0;
        let legend_top = MARGIN_TOP + PLOT_HEIGHT + MARGIN_BOTTOM;
        let height = legend_top + legend_height(self.series.len()) + 8.0;
        let (left, right) = (MARGIN_LEFT, WIDTH - MARGIN_RIGHT);
        let (top, bottom) = (MARGIN_TOP, MARGIN_TOP + PLOT_HEIGHT);
        let mut svg = String::new();
        svg_open(&mut svg, height, &self.title);
        plot_frame(&mut svg, left, top, right, bottom);
        let points = || self.series.iter().flat_map(|(_, p)| p.iter().copied());
        let x_map = Mapped::new(
            self.x.scale,
            points()
                .map(|p| p.0)
                .chain(self.markers.iter().map(|m| m.0)),
            (left, right),
        );
        let y_map = Mapped::new(self.y.scale, points().map(|p| p.1), (bottom, top));
        y_axis(&mut svg, &y_map, &self.y, left, right);
        for tick in x_map.ticks() {
            let x = x_map.to_pixel(tick);
            let _ = write!(
                svg,
                "<line x1=\"{x:.1}\" y1=\"{top:.1}\" x2=\"{x:.1}\" y2=\"{bottom:.1}\" class=\"grid\"/><text x=\"{x:.1}\" y=\"{:.1}\" class=\"tick\" text-anchor=\"middle\">{}</text>",
                bottom + 16.0,
                escape(&(self.x.format)(tick))
            );
        }
        for (x, label) in &self.markers {
            let x = x_map.to_pixel(*x);
            let _ = write!(
                svg,
                "<line x1=\"{x:.1}\" y1=\"{top:.1}\" x2=\"{x:.1}\" y2=\"{bottom:.1}\" class=\"marker\"/><text class=\"mark\" x=\"{:.1}\" y=\"{:.1}\">{}</text>",
                x - 3.0,
                top + 12.0,
                escape(label)
            );
        }
        for (index, (label, points)) in self.series.iter().enumerate() {
            let path: Vec<String> = points
                .iter()
                .filter(|(x, y)| x.is_finite() && y.is_finite())
                .map(|&(x, y)| format!("{:.1},{:.1}", x_map.to_pixel(x), y_map.to_pixel(y)))
                .collect();
            let _ = write!(
                svg,
                "<polyline class=\"line\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"{} points=\"{}\"><title>{}</title></polyline>",
                colour(index),
                dash(index),
                path.join(" "),
                escape(label)
            );
            if points.len() <= 40 {
                for point in &path {
                    let (cx, cy) = point.split_once(',').unwrap_or(("0", "0"));
                    let _ = write!(
                        svg,
                        "<circle cx=\"{cx}\" cy=\"{cy}\" r=\"3\" fill=\"{}\"/>",
                        colour(index)
                    );
                }
            }
        }
        x_axis_label(&mut svg, &self.x.label, bottom);
        let labels: Vec<String> = self.series.iter().map(|(l, _)| l.clone()).collect();
        legend(&mut svg, &labels, legend_top, true);
        svg.push_str("</svg>");
        Figure {
            title: self.title,
            svg,
            table: self.table,
        }
    }
}

/// A grid of cells shaded by value (rows × columns), each cell labelled with its number.
pub struct HeatMap {
    pub title: String,
    pub row_label: String,
    pub column_label: String,
    pub value_label: String,
    pub rows: Vec<String>,
    pub columns: Vec<String>,
    pub values: Vec<Vec<Option<f64>>>,
    pub format: fn(f64) -> String,
}

impl HeatMap {
    pub fn render(&self) -> Figure {
        const CELL_HEIGHT: f64 = 24.0;
        let (left, right) = (MARGIN_LEFT + 40.0, WIDTH - MARGIN_RIGHT);
        let top = MARGIN_TOP + 20.0;
        let bottom = top + CELL_HEIGHT * self.rows.len().max(1) as f64;
        let height = bottom + 56.0;
        let cell_width = (right - left) / self.columns.len().max(1) as f64;
        let mut svg = String::new();
        svg_open(&mut svg, height, &self.title);
        plot_frame(&mut svg, left, top, right, bottom);
        let max = self
            .values
            .iter()
            .flatten()
            .flatten()
            .copied()
            .fold(0.0, f64::max);
        for (column, label) in self.columns.iter().enumerate() {
            let _ = write!(
                svg,
                "<text class=\"tick\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
                left + (column as f64 + 0.5) * cell_width,
                top - 6.0,
                escape(label)
            );
        }
        for (row, label) in self.rows.iter().enumerate() {
            let y = top + row as f64 * CELL_HEIGHT;
            let _ = write!(
                svg,
                "<text class=\"tick\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
                left - 6.0,
                y + CELL_HEIGHT / 2.0 + 4.0,
                escape(label)
            );
            for column in 0..self.columns.len() {
                let Some(value) = self
                    .values
                    .get(row)
                    .and_then(|r| r.get(column))
                    .copied()
                    .flatten()
                else {
                    continue;
                };
                let share = if max > 0.0 { value / max } else { 0.0 };
                // From pale to the first palette blue, so the number stays readable on top.
                let shade = |pale: f64, full: f64| (pale + (full - pale) * share).round() as u8;
                let fill = format!(
                    "#{:02x}{:02x}{:02x}",
                    shade(222.0, 78.0),
                    shade(235.0, 121.0),
                    shade(247.0, 167.0)
                );
                let text_colour = if share > 0.55 { "#ffffff" } else { "#1b1f24" };
                let x = left + column as f64 * cell_width;
                let _ = write!(
                    svg,
                    "<rect class=\"cell\" x=\"{x:.1}\" y=\"{y:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"{fill}\"/><text class=\"cellv\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" fill=\"{text_colour}\">{}</text>",
                    cell_width - 1.0,
                    CELL_HEIGHT - 1.0,
                    x + cell_width / 2.0,
                    y + CELL_HEIGHT / 2.0 + 4.0,
                    escape(&(self.format)(value))
                );
            }
        }
        let _ = write!(
            svg,
            "<text class=\"axis\" transform=\"translate(16 {:.1}) rotate(-90)\" text-anchor=\"middle\">{}</text>",
            (top + bottom) / 2.0,
            escape(&self.row_label)
        );
        let _ = write!(
            svg,
            "<text class=\"axis\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}; cells: {} (darker is higher)</text>",
            (left + right) / 2.0,
            bottom + 24.0,
            escape(&self.column_label),
            escape(&self.value_label)
        );
        svg.push_str("</svg>");
        let mut header = vec![format!("{} \\ {}", self.row_label, self.column_label)];
        header.extend(self.columns.iter().cloned());
        let rows = self
            .rows
            .iter()
            .enumerate()
            .map(|(row, label)| {
                let mut cells = vec![label.clone()];
                cells.extend((0..self.columns.len()).map(|column| {
                    self.values
                        .get(row)
                        .and_then(|r| r.get(column))
                        .copied()
                        .flatten()
                        .map_or_else(|| "–".into(), self.format)
                }));
                cells
            })
            .collect();
        Figure {
            title: self.title.clone(),
            svg,
            table: Table { header, rows },
        }
    }
}

/// `text` in at most `max_lines` lines of at most `max_chars` characters, broken after a
/// separator (`,` `/` `-` `_`) or at a space where it can be, inside a word where it cannot;
/// what does not fit is cut with an ellipsis on the last line.
fn wrap_label(text: &str, max_chars: usize, max_lines: usize) -> Vec<String> {
    let max_chars = max_chars.max(4);
    // Pieces that each end at a break opportunity (a space is dropped at a line end).
    let mut pieces: Vec<String> = vec![String::new()];
    for c in text.chars() {
        if let Some(piece) = pieces.last_mut() {
            piece.push(c);
        }
        // Not after '=': `rw=` alone on a line says less than `rw=randwrite` kept together.
        if matches!(c, ',' | '/' | '-' | '_' | ' ') {
            pieces.push(String::new());
        }
    }
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for piece in pieces.into_iter().filter(|p| !p.is_empty()) {
        let fits = line.chars().count() + piece.trim_end().chars().count() <= max_chars;
        if !line.is_empty() && !fits {
            lines.push(line.trim_end().to_owned());
            line = String::new();
        }
        line.push_str(&piece);
        // A piece longer than a line is split inside itself.
        while line.trim_end().chars().count() > max_chars {
            let head: String = line.chars().take(max_chars).collect();
            line = line.chars().skip(max_chars).collect();
            lines.push(head);
        }
    }
    if !line.trim_end().is_empty() {
        lines.push(line.trim_end().to_owned());
    }
    if lines.len() > max_lines {
        let rest = lines[max_lines - 1..].join(" ");
        lines.truncate(max_lines - 1);
        lines.push(shorten(&rest, max_chars));
    }
    lines
}

/// `text` cut to `max` characters with an ellipsis, for crowded axis labels.
fn shorten(text: &str, max: usize) -> String {
    if text.chars().count() <= max.max(4) {
        return text.to_owned();
    }
    let kept: String = text.chars().take(max.max(4) - 1).collect();
    format!("{kept}…")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_category_labels_wrap_at_separators_within_their_width() {
        assert_eq!(
            wrap_label("cdm/4K QD32,rw=randwrite", 15, 3),
            ["cdm/4K QD32,", "rw=randwrite"]
        );
        assert_eq!(wrap_label("cdm/Seq,rw=read", 15, 3), ["cdm/Seq,rw=read"]);
        // A word longer than the line is split inside; past the last line, an ellipsis.
        assert_eq!(wrap_label("abcdefghij", 4, 3), ["abcd", "efgh", "ij"]);
        assert_eq!(wrap_label("a,b,c,d,e,f", 4, 2), ["a,b,", "c,d…"]);
        for lines in [
            wrap_label("iometer-database/qd=32,bs=8k,rw=randrw", 12, 3),
            wrap_label("x".repeat(50).as_str(), 9, 3),
        ] {
            assert!(lines.len() <= 3 && lines.iter().all(|l| l.chars().count() <= 12));
        }
    }

    #[test]
    fn bar_labels_fit_their_group_and_push_the_axis_title_down() {
        let categories: Vec<String> = [
            "cdm/Seq,rw=read",
            "cdm/Seq,rw=write",
            "cdm/512K,rw=randread",
            "cdm/512K,rw=randwrite",
            "cdm/4K,rw=randread",
            "cdm/4K,rw=randwrite",
            "cdm/4K QD32,rw=randread",
            "cdm/4K QD32,rw=randwrite",
        ]
        .map(String::from)
        .to_vec();
        let chart = BarChart {
            title: "t".into(),
            category_label: "configuration (job)".into(),
            y: Axis {
                label: "MB/s".into(),
                scale: Scale::Linear,
                format: |v| format!("{v}"),
            },
            series: vec![("read".into(), vec![Some(1.0); categories.len()])],
            categories,
        };
        let svg = chart.render().svg;
        let group_width = (WIDTH - MARGIN_RIGHT - MARGIN_LEFT) / 8.0;
        let tspans: Vec<&str> = svg
            .split("<tspan ")
            .skip(1)
            .map(|s| &s[s.find('>').unwrap() + 1..s.find("</tspan>").unwrap()])
            .collect();
        assert!(tspans.contains(&"rw=randwrite") && tspans.contains(&"cdm/4K QD32,"));
        for line in &tspans {
            assert!(
                line.chars().count() as f64 * TICK_CHAR_WIDTH <= group_width,
                "{line} is wider than its group"
            );
        }
        // Every label whole in its hover title; the axis title below the second line.
        assert!(svg.contains("<title>cdm/4K QD32,rw=randwrite</title>"));
        let axis_y: f64 = svg
            .split("class=\"axis\" x=\"")
            .nth(1)
            .and_then(|s| s.split("y=\"").nth(1))
            .and_then(|s| s.split('"').next())
            .unwrap()
            .parse()
            .unwrap();
        let last_line_y = MARGIN_TOP + 300.0 + 16.0 + TICK_LINE_HEIGHT;
        assert!(
            axis_y >= last_line_y + TICK_LINE_HEIGHT,
            "axis title at {axis_y}"
        );
    }

    #[test]
    fn nice_steps_are_one_two_five() {
        assert_eq!(nice_step(0.7), 1.0);
        assert_eq!(nice_step(1.5), 2.0);
        assert_eq!(nice_step(3.0), 5.0);
        assert_eq!(nice_step(7.0), 10.0);
        assert_eq!(nice_step(230.0), 500.0);
    }

    #[test]
    fn linear_scale_starts_at_zero_and_covers_the_maximum() {
        let mapped = Mapped::new(Scale::Linear, [3.0, 97.0].into_iter(), (300.0, 0.0));
        assert_eq!(mapped.low, 0.0);
        assert!(mapped.high >= 97.0);
        assert_eq!(mapped.to_pixel(0.0), 300.0);
        assert_eq!(mapped.to_pixel(mapped.high), 0.0);
        let ticks = mapped.ticks();
        assert_eq!(ticks.first(), Some(&0.0));
        assert_eq!(ticks.last(), Some(&mapped.high));
    }

    #[test]
    fn log_scale_spans_whole_powers_and_spaces_them_evenly() {
        let mapped = Mapped::new(
            Scale::Log { base: 2.0 },
            [4096.0, 1_048_576.0].into_iter(),
            (0.0, 800.0),
        );
        assert_eq!(mapped.low, 4096.0);
        assert_eq!(mapped.high, 1_048_576.0);
        let step = mapped.to_pixel(8192.0) - mapped.to_pixel(4096.0);
        let next = mapped.to_pixel(16384.0) - mapped.to_pixel(8192.0);
        assert!((step - next).abs() < 1e-9);
        assert_eq!(mapped.ticks().len(), 9);
    }

    #[test]
    fn escaping_covers_markup_and_quotes() {
        assert_eq!(
            escape("<a href=\"x\">&'"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
    }
}
