//! The load script's answers (`examples/bench_upstream.rs`), shared by the
//! criterion benches: the SSE task stream and the small JSON answer.

/// The task stream for `task`, in one piece, under JSON-RPC id `rpc_id`:
/// snapshot, working, 17 chunks of one artifact (the first replacing, the
/// last closing it), completed.
pub fn stream(task: &str, rpc_id: u32) -> Vec<u8> {
    let rpc = |result: String| {
        format!("data: {{\"jsonrpc\":\"2.0\",\"id\":{rpc_id},\"result\":{result}}}\n\n")
    };
    let status = |state: &str| {
        rpc(format!(
            "{{\"statusUpdate\":{{\"taskId\":\"{task}\",\"contextId\":\"ctx_3\",\"status\":{{\"state\":\"{state}\",\"timestamp\":\"2026-01-01T00:00:00Z\"}}}}}}"
        ))
    };
    let mut body = rpc(format!(
        "{{\"task\":{{\"id\":\"{task}\",\"contextId\":\"ctx_3\",\"status\":{{\"state\":\"TASK_STATE_SUBMITTED\"}}}}}}"
    ));
    body.push_str(&status("TASK_STATE_WORKING"));
    for i in 0..17 {
        body.push_str(&rpc(format!(
            "{{\"artifactUpdate\":{{\"taskId\":\"{task}\",\"contextId\":\"ctx_3\",\"append\":{},\"lastChunk\":{},\"artifact\":{{\"artifactId\":\"art_1\",\"parts\":[{{\"text\":\"chunk {i:02} of the generated itinerary, with enough words to look like model output ...\"}}]}}}}}}",
            i > 0,
            i == 16
        )));
    }
    body.push_str(&status("TASK_STATE_COMPLETED"));
    body.into_bytes()
}

/// The small JSON answer about `task`, under JSON-RPC id `rpc_id`.
pub fn answer(task: &str, rpc_id: u32) -> Vec<u8> {
    format!(
        r#"{{"jsonrpc":"2.0","id":{rpc_id},"result":{{"id":"{task}","contextId":"ctx_3","status":{{"state":"TASK_STATE_COMPLETED"}}}}}}"#
    )
    .into_bytes()
}
