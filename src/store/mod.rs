//! The memory database: connection, schema and migrations, and the queries memscope makes.

pub mod rows;
