//! What `TokenBufferMemory` sends: the row window, the thread, prompt messages and pruning.
