//! Fault injection, so clients can test how they cope with a slow or failing platform.

use std::{
    sync::{PoisonError, RwLock},
    time::Duration,
};

use licensing_sdk::ErrorCode;

/// What the simulator does wrong on purpose.
///
/// Every request (after authentication and the `g_nonce` check) is delayed by `latency`,
/// then answered with code `500` ("network exception, retry") with probability
/// `rate_500`, or, on the member center's user-center operations (`addMembers`,
/// `editMember`, `resetMemberPassword`, `deleteMember`, `listMembers`), with code `80001`
/// ("user center exception") with probability `rate_80001`. A faulted request changes no
/// state.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FaultSettings {
    /// Added to every request before it is handled.
    pub latency: Duration,
    /// Probability (0.0 to 1.0) of answering code `500`.
    pub rate_500: f64,
    /// Probability (0.0 to 1.0) of answering code `80001` where the document lists it.
    pub rate_80001: f64,
}

impl FaultSettings {
    /// Rates outside 0.0..=1.0 (or NaN) are clamped, so a typo cannot disable the check.
    fn clamped(self) -> Self {
        let clamp = |rate: f64| {
            if rate.is_nan() {
                0.0
            } else {
                rate.clamp(0.0, 1.0)
            }
        };
        Self {
            latency: self.latency,
            rate_500: clamp(self.rate_500),
            rate_80001: clamp(self.rate_80001),
        }
    }
}

/// The fault settings of a running simulator; see [`crate::Simulator::faults`].
#[derive(Debug, Default)]
pub struct Faults(RwLock<FaultSettings>);

impl Faults {
    pub(crate) fn new(settings: FaultSettings) -> Self {
        Self(RwLock::new(settings.clamped()))
    }

    /// The current settings.
    pub fn get(&self) -> FaultSettings {
        *self.0.read().unwrap_or_else(PoisonError::into_inner)
    }

    /// Replaces the settings; takes effect for the next request.
    pub fn set(&self, settings: FaultSettings) {
        *self.0.write().unwrap_or_else(PoisonError::into_inner) = settings.clamped();
    }

    /// Turns every fault off.
    pub fn clear(&self) {
        self.set(FaultSettings::default());
    }

    /// Sets the added latency only.
    pub fn set_latency(&self, latency: Duration) {
        self.set(FaultSettings {
            latency,
            ..self.get()
        });
    }

    /// Sets the probability of code `500` only.
    pub fn set_rate_500(&self, rate: f64) {
        self.set(FaultSettings {
            rate_500: rate,
            ..self.get()
        });
    }

    /// Sets the probability of code `80001` only.
    pub fn set_rate_80001(&self, rate: f64) {
        self.set(FaultSettings {
            rate_80001: rate,
            ..self.get()
        });
    }

    /// The injected failure for one request, if any.
    pub(crate) fn roll(settings: &FaultSettings, user_center: bool) -> Option<ErrorCode> {
        if settings.rate_500 <= 0.0 && (settings.rate_80001 <= 0.0 || !user_center) {
            return None;
        }
        // Uniform in [0, 1): a rate of 1.0 always fires, 0.0 never.
        // The session's random source (one dependency fewer than a fast generator; a
        // draw is taken only while a failure rate is set). If it fails, nothing fires.
        let draw = getrandom::u64().map_or(1.0, |bits| (bits >> 11) as f64 / (1u64 << 53) as f64);
        if draw < settings.rate_500 {
            Some(ErrorCode::NetworkException)
        } else if user_center && draw < settings.rate_500 + settings.rate_80001 {
            Some(ErrorCode::UserCenterException)
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn certain_and_impossible_faults() {
        let always = FaultSettings {
            rate_500: 1.0,
            ..Default::default()
        };
        assert_eq!(
            Faults::roll(&always, false),
            Some(ErrorCode::NetworkException)
        );
        let user_center = FaultSettings {
            rate_80001: 1.0,
            ..Default::default()
        };
        assert_eq!(
            Faults::roll(&user_center, true),
            Some(ErrorCode::UserCenterException)
        );
        assert_eq!(Faults::roll(&user_center, false), None);
        assert_eq!(Faults::roll(&FaultSettings::default(), true), None);
    }

    #[test]
    fn rates_are_clamped() {
        let faults = Faults::new(FaultSettings {
            rate_500: 7.0,
            rate_80001: f64::NAN,
            ..Default::default()
        });
        assert_eq!(faults.get().rate_500, 1.0);
        assert_eq!(faults.get().rate_80001, 0.0);
    }
}
