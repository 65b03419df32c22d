//! The task-lifecycle reducer (per exchange) and registry (across exchanges).
