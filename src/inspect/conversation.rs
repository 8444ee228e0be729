//! A conversation as memscope loads it, and its thread: Dify's extraction, the true tree path,
//! and where the two differ.

pub use crate::sources::dify::thread::{
    ThreadMode, ThreadNodes, ThreadView, compare_thread, thread_nodes, thread_view,
};
pub use crate::sources::dify::window::{
    LoadedConversation, WindowOrigin, WindowedRows, conversation_info, effective_window,
    load_conversation, load_window, load_windows, memory_rows_newest_first,
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
