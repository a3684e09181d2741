//! Roku's task tools: `task_create`, `task_list`, `task_update` and
//! `task_get` over a store the loop keeps for the run, so a model can plan
//! a long task as a checklist and find it again after compaction has
//! dropped the turns that wrote it. The loop answers them itself, like the
//! pseudo-tools; results are short text the model reads back.

use serde_json::{Value, json};

use crate::tools::{ToolOutput, ToolSpec};

/// `task_create`: adds a task.
pub const TASK_CREATE: &str = "task_create";
/// `task_list`: every task with its status.
pub const TASK_LIST: &str = "task_list";
/// `task_update`: changes a task's status (or title).
pub const TASK_UPDATE: &str = "task_update";
/// `task_get`: one task in full.
pub const TASK_GET: &str = "task_get";

/// The statuses a task may have.
const STATUSES: [&str; 4] = ["pending", "in_progress", "completed", "cancelled"];

/// Whether `name` is one of the task tools.
pub fn is_task_tool(name: &str) -> bool {
    matches!(name, TASK_CREATE | TASK_LIST | TASK_UPDATE | TASK_GET)
}

/// One task.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Task {
    /// 1-based, in creation order.
    pub id: u32,
    /// What to do, in a line.
    pub title: String,
    /// Details, possibly empty.
    pub description: String,
    /// One of `pending`, `in_progress`, `completed`, `cancelled`.
    pub status: String,
}

/// The run's tasks.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TaskStore {
    tasks: Vec<Task>,
}

impl TaskStore {
    /// The tasks, in creation order.
    pub fn tasks(&self) -> &[Task] {
        &self.tasks
    }

    /// Answers one task-tool call with `arguments` (a JSON object as text);
    /// a bad call gets an error result the model can correct.
    pub fn handle(&mut self, tool: &str, arguments: &str) -> ToolOutput {
        let args: Value = serde_json::from_str(arguments).unwrap_or(Value::Null);
        let text = |name: &str| args.get(name).and_then(Value::as_str).map(str::to_owned);
        match tool {
            TASK_CREATE => match text("title").filter(|t| !t.trim().is_empty()) {
                Some(title) => {
                    let id = self.tasks.len() as u32 + 1;
                    let description = text("description").unwrap_or_default();
                    self.tasks.push(Task { id, title, description, status: "pending".into() });
                    ToolOutput::ok(format!("created task {id}"))
                }
                None => ToolOutput::error("task_create needs a non-empty `title`"),
            },
            TASK_LIST if self.tasks.is_empty() => ToolOutput::ok("no tasks"),
            TASK_LIST => ToolOutput::ok(self.tasks.iter().map(|t| format!("{} [{}] {}", t.id, t.status, t.title)).collect::<Vec<_>>().join("\n")),
            TASK_GET => match self.find(&args) {
                Ok(task) => ToolOutput::ok(format!("{} [{}] {}\n{}", task.id, task.status, task.title, task.description)),
                Err(error) => error,
            },
            TASK_UPDATE => {
                let status = text("status");
                if let Some(bad) = status.as_deref().filter(|s| !STATUSES.contains(s)) {
                    return ToolOutput::error(format!("unknown status `{bad}`; use one of {}", STATUSES.join(", ")));
                }
                let title = text("title");
                match self.find_mut(&args) {
                    Ok(task) => {
                        task.status = status.unwrap_or_else(|| task.status.clone());
                        task.title = title.unwrap_or_else(|| task.title.clone());
                        ToolOutput::ok(format!("task {} is {}", task.id, task.status))
                    }
                    Err(error) => error,
                }
            }
            other => ToolOutput::error(format!("`{other}` is not a task tool")),
        }
    }

    fn index(&self, args: &Value) -> Result<usize, ToolOutput> {
        let id = args.get("id").and_then(Value::as_u64).ok_or_else(|| ToolOutput::error("needs a numeric `id`"))?;
        self.tasks.iter().position(|t| u64::from(t.id) == id).ok_or_else(|| ToolOutput::error(format!("no task {id}")))
    }

    fn find(&self, args: &Value) -> Result<&Task, ToolOutput> {
        self.index(args).map(|i| &self.tasks[i])
    }

    fn find_mut(&mut self, args: &Value) -> Result<&mut Task, ToolOutput> {
        self.index(args).map(|i| &mut self.tasks[i])
    }
}

/// The declarations of the four task tools.
pub fn task_tool_specs() -> Vec<ToolSpec> {
    let id = json!({ "type": "integer", "description": "The task's id." });
    let object = |properties: Value, required: &[&str]| json!({ "type": "object", "properties": properties, "required": required });
    vec![
        ToolSpec {
            name: TASK_CREATE.into(),
            description: "Add a task to your checklist for this run.".into(),
            parameters: object(json!({ "title": { "type": "string" }, "description": { "type": "string" } }), &["title"]),
        },
        ToolSpec { name: TASK_LIST.into(), description: "List your tasks with their status.".into(), parameters: object(json!({}), &[]) },
        ToolSpec {
            name: TASK_UPDATE.into(),
            description: "Change a task's status (pending, in_progress, completed, cancelled) or title.".into(),
            parameters: object(json!({ "id": id, "status": { "type": "string", "enum": STATUSES }, "title": { "type": "string" } }), &["id"]),
        },
        ToolSpec { name: TASK_GET.into(), description: "Show one task in full.".into(), parameters: object(json!({ "id": id }), &["id"]) },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn create_update_list_and_get() {
        let mut store = TaskStore::default();
        assert_eq!(store.handle(TASK_LIST, "{}"), ToolOutput::ok("no tasks"));
        assert_eq!(store.handle(TASK_CREATE, r#"{"title":"read the test","description":"tests/slice.rs"}"#), ToolOutput::ok("created task 1"));
        assert_eq!(store.handle(TASK_CREATE, r#"{"title":"fix end()"}"#), ToolOutput::ok("created task 2"));
        assert_eq!(store.handle(TASK_UPDATE, r#"{"id":1,"status":"completed"}"#), ToolOutput::ok("task 1 is completed"));
        assert_eq!(store.handle(TASK_LIST, "{}"), ToolOutput::ok("1 [completed] read the test\n2 [pending] fix end()"));
        assert_eq!(store.handle(TASK_GET, r#"{"id":1}"#), ToolOutput::ok("1 [completed] read the test\ntests/slice.rs"));
    }

    #[test]
    fn bad_calls_get_errors_the_model_can_act_on() {
        let mut store = TaskStore::default();
        assert!(store.handle(TASK_CREATE, "{}").is_error);
        assert_eq!(store.handle(TASK_GET, r#"{"id":3}"#), ToolOutput::error("no task 3"));
        assert_eq!(store.handle(TASK_GET, r#"{"id":"x"}"#), ToolOutput::error("needs a numeric `id`"));
        store.handle(TASK_CREATE, r#"{"title":"t"}"#);
        let bad = store.handle(TASK_UPDATE, r#"{"id":1,"status":"done"}"#);
        assert!(bad.is_error && bad.content.contains("in_progress"), "{bad:?}");
        assert_eq!(store.tasks()[0].status, "pending", "a refused update changes nothing");
        assert_eq!(task_tool_specs().iter().filter(|s| is_task_tool(&s.name)).count(), 4);
    }
}
