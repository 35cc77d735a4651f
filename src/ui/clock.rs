//! The page's clock: one signal that ticks every second while the page is open, so every live
//! elapsed time ("Thinking… (12s)") redraws from the same tick.

use leptos::prelude::*;

/// The time of the last tick, in ms on the client's clock; provided as context by the page.
#[derive(Clone, Copy)]
pub struct Clock(pub RwSignal<f64>);
