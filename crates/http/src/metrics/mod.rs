//! `GET /metrics`: the snapshot as Prometheus metrics, through the official client
//! (`prometheus-client`). Prometheus asks for OpenMetrics and gets it; anyone else (curl,
//! `promtool check metrics`, which reads only the 0.0.4 text format) gets that format.

mod budget;
mod families;

pub use budget::TopicBudget;
pub use families::{families, Family, Kind};

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::Registry;

/// The content type of OpenMetrics text.
pub const OPENMETRICS: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// The families encoded for a client that accepts `accept`; returns the content type and
/// the text.
pub fn render(families: Vec<Family>, accept: &str) -> (&'static str, String) {
    let mut registry = Registry::with_prefix("recd");
    registry.register_collector(Box::new(Encoded(families)));
    let mut text = String::new();
    if accept.contains("application/openmetrics-text") {
        prometheus_client::encoding::text::encode(&mut text, &registry)
            .expect("writing to a String cannot fail");
        (OPENMETRICS, text)
    } else {
        prometheus_client::encoding::prometheus_text::encode(&mut text, &registry)
            .expect("writing to a String cannot fail");
        (
            prometheus_client::encoding::prometheus_text::CONTENT_TYPE,
            text,
        )
    }
}

/// The families of one scrape, as the registry's only collector.
#[derive(Debug)]
struct Encoded(Vec<Family>);

impl Collector for Encoded {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        for family in &self.0 {
            let unit = family.unit.clone();
            let metric_type = match family.kind {
                Kind::Counter => MetricType::Counter,
                Kind::Gauge => MetricType::Gauge,
                Kind::Info => MetricType::Info,
            };
            let mut metric =
                encoder.encode_descriptor(family.name, family.help, unit.as_ref(), metric_type)?;
            if let [(labels, value)] = family.samples.as_slice() {
                if labels.is_empty() {
                    // A family of one unlabelled sample: no `{}` after its name.
                    match family.kind {
                        Kind::Counter => ConstCounter::new(*value).encode(metric)?,
                        Kind::Gauge => ConstGauge::new(*value).encode(metric)?,
                        Kind::Info => metric.encode_info(labels)?,
                    }
                    continue;
                }
            }
            for (labels, value) in &family.samples {
                match family.kind {
                    Kind::Counter => {
                        ConstCounter::new(*value).encode(metric.encode_family(labels)?)?
                    }
                    Kind::Gauge => ConstGauge::new(*value).encode(metric.encode_family(labels)?)?,
                    Kind::Info => metric.encode_info(labels)?,
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
