//! fio's `random_distribution`: what the job asks for and its zone lists
//! (the samplers that draw from it are the engine's).

mod kinds;
pub mod sequence;
pub mod zones;

pub use kinds::Distribution;
pub use sequence::BlockSequence;

/// A `random_distribution` fio would not take.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DistributionError {
    #[error("random_distribution '{text}': {what} needs a number, as in {what}:1.2")]
    NeedsNumber { text: String, what: &'static str },
    #[error("zipf theta must be above 0 and not 1 (got {0})")]
    ZipfTheta(f64),
    #[error("pareto h must be between 0 and 1 exclusive (got {0})")]
    ParetoH(f64),
    #[error("normal deviation is a percentage of the range, 0 to 100 (got {0})")]
    NormalDev(f64),
    #[error("unknown random_distribution '{0}': use random, zipf:THETA, pareto:H, normal:DEV, zoned:A/R:..., zoned_abs:A/SIZE:... or sequence:B,B,...")]
    Unknown(String),
    #[error(transparent)]
    Zones(#[from] zones::ZoneError),
    #[error(transparent)]
    Sequence(#[from] sequence::SequenceError),
}

impl Distribution {
    pub fn parse(text: &str) -> Result<Distribution, DistributionError> {
        let (kind, arg) = text.split_once(':').unwrap_or((text, ""));
        let num = |what: &'static str| -> Result<f64, DistributionError> {
            // A finite number: "inf" and "nan" parse, and would poison the draws.
            arg.parse::<f64>()
                .ok()
                .filter(|x| x.is_finite())
                .ok_or_else(|| DistributionError::NeedsNumber {
                    text: text.into(),
                    what,
                })
        };
        Ok(match kind {
            "random" | "uniform" => Distribution::Uniform,
            "zipf" => {
                let t = num("zipf")?;
                if !(t > 0.0 && t != 1.0) {
                    return Err(DistributionError::ZipfTheta(t));
                }
                Distribution::Zipf(t)
            }
            "pareto" => {
                let h = num("pareto")?;
                if !(h > 0.0 && h < 1.0) {
                    return Err(DistributionError::ParetoH(h));
                }
                Distribution::Pareto(h)
            }
            "normal" => {
                let dev = if arg.is_empty() { 0.0 } else { num("normal")? };
                if !(0.0..=100.0).contains(&dev) {
                    return Err(DistributionError::NormalDev(dev));
                }
                Distribution::Normal(dev)
            }
            "zoned_abs" => zones::parse(arg, true, &crate::units::parse_size)?,
            "zoned" => zones::parse(arg, false, &crate::units::parse_size)?,
            "sequence" => Distribution::Sequence(BlockSequence::parse(arg)?),
            _ => return Err(DistributionError::Unknown(kind.into())),
        })
    }
}
