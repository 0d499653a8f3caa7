//! Synthetic, host-shaped hook payloads for liveness probes: built by each host's file in the
//! `fable-hosts` crate (see [`fable_hosts::synthetic`]), re-exported for the probe runner.

pub use fable_hosts::synthetic::{synthetic_payload, PROBE_SESSION_ID, TRANSCRIPT_FILE};
pub use fable_hosts::{Event, Host};
