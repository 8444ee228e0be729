//! The headless command line.
