//! Client state: the pure turn reducer, the labels it derives, and the controller that binds
//! the chat server function to signals. Compiled on both sides; browser APIs only in effects.

pub mod controller;
pub mod labels;
pub mod persistence;
pub mod storage;
pub mod thinking_view;
pub mod turn_state;
