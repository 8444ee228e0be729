//! The message tree: children, siblings (regenerations), leaves and anomalies.
