//! The batch chart (`benches/batch-scale.svg`): each part's time against the number of
//! orders, on log scales.

use std::path::Path;

use anyhow::{Context, Result};
use serde_json::Value;

use super::format::thousands;

/// Writes the chart of `batch` (the batch benchmark's figures) to `path`.
pub fn write(path: &Path, batch: &Value) -> Result<()> {
    use plotters::prelude::*;
    let rows = batch["sizes"].as_array().context("batch sizes")?;
    // Milliseconds per size; sizes without a measurement (refused) are left out.
    let points = |part: &str, key: &str| -> Vec<(f64, f64)> {
        rows.iter()
            .filter_map(|r| Some((r["orders"].as_f64()?, r[part][key].as_f64()? / 1000.0)))
            .collect()
    };
    let series = [
        (
            "round trip: SDK → simulator → SDK",
            points("round_trip", "sdk_us"),
            RED,
        ),
        (
            "time in the simulator (HTTP, one connection)",
            points("sim", "sim_us"),
            MAGENTA,
        ),
        (
            "client side: the SDK's own work",
            points("client", "sdk_us"),
            GREEN,
        ),
        (
            "floor: serde_json serialize + parse of the request",
            points("round_trip", "floor_us"),
            BLUE,
        ),
    ];
    let all = || series.iter().flat_map(|s| s.1.iter());
    let max_x = all().map(|p| p.0).fold(1.0, f64::max);
    let min_y = all().map(|p| p.1).fold(f64::INFINITY, f64::min).max(1e-4);
    let max_y = all().map(|p| p.1).fold(0.001, f64::max);
    let area = SVGBackend::new(path, (760, 460)).into_drawing_area();
    area.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&area)
        .caption("batchOrder cost by number of orders", ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(
            (5.0..max_x * 1.6).log_scale(),
            (min_y / 2.0..max_y * 2.0).log_scale(),
        )?;
    chart
        .configure_mesh()
        .x_label_formatter(&|x| thousands(*x))
        .x_desc("orders in the batch (log)")
        .y_desc("milliseconds (log)")
        .draw()?;
    for (label, data, color) in &series {
        let color = *color;
        chart
            .draw_series(LineSeries::new(data.iter().copied(), color.stroke_width(2)))?
            .label(*label)
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 16, y)], color.stroke_width(2))
            });
        chart.draw_series(data.iter().map(|&p| Circle::new(p, 3, color.filled())))?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .border_style(BLACK)
        .background_style(WHITE)
        .draw()?;
    area.present()?;
    Ok(())
}
