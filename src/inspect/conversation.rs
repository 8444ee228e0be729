//! A conversation as memscope loads it, and its thread: Dify's extraction, the true tree path,
//! and where the two differ.

pub use crate::memory::thread_view::{ThreadMode, ThreadNodes, thread_nodes};
pub use crate::sources::dify::window::{
    LoadedConversation, WindowOrigin, WindowedRows, effective_window, load_conversation,
    load_window, load_windows,
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_precedence_is_request_then_app_then_500() {
        assert_eq!(
            effective_window(Some(10), Some(20)),
            (10, WindowOrigin::Requested)
        );
        assert_eq!(effective_window(Some(0), Some(20)), (20, WindowOrigin::App));
        assert_eq!(effective_window(None, Some(9999)), (500, WindowOrigin::App));
        assert_eq!(
            effective_window(Some(-1), None),
            (500, WindowOrigin::DifyDefault)
        );
    }
}
