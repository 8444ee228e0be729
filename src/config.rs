//! Configuration: the embedded default, the user file, the environment and flags.
