//! Native tests of the controller.
