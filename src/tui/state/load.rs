//! Where a load stands: what a pane shows until its result arrives.

/// Where a view's data stands. Each pane shows it, so nothing is ever silently blank.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum LoadStatus {
    #[default]
    Loading,
    Loaded,
    Failed(String),
}

impl LoadStatus {
    pub fn is_loading(&self) -> bool {
        matches!(self, LoadStatus::Loading)
    }

    /// A load's result arrived: its value goes into `slot`, or its error here.
    pub fn settle<T>(&mut self, slot: &mut Option<T>, result: Result<T, String>) {
        match result {
            Ok(value) => {
                *slot = Some(value);
                *self = LoadStatus::Loaded;
            }
            Err(error) => *self = LoadStatus::Failed(error),
        }
    }
}
