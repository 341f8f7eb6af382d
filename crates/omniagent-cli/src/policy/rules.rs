//! Policy rules: CEL conditions over the caller, the item, the arguments and the time,
//! in order; the first that holds decides, and a call none holds for is allowed.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use cel::common::ast::{EntryExpr, Expr};
use cel::{Context, Env, IdedExpr, Program, Value};
use skill_core::{CallContext, CallLayer, Caller, Item, ToolError};

use super::state::PolicyState;
use super::variables::{Known, KnownClient, KnownItem, Variables, arguments_value};
use crate::config::RuleConfig;

/// The variables a rule may read.
const VARIABLES: [&str; 4] = ["client", "tool", "arguments", "now"];

/// What a rule does to a call its condition holds for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Effect {
    Deny,
    Allow,
}

/// A compiled rule.
struct Rule {
    name: String,
    effect: Effect,
    program: Program,
    /// Whether its condition reads `arguments` (so a list cannot apply it).
    reads_arguments: bool,
    /// Whether its condition reads neither `arguments` nor `now`: its verdict for a
    /// client and an item is then the same for every call, and is kept.
    fixed: bool,
    /// The calls it decided, counted in the [`PolicyState`] it was compiled with.
    hits: Arc<AtomicU64>,
}

/// Why a rule could not be compiled, for the config error that names its line.
#[derive(Debug, thiserror::Error)]
#[error("policy rule `{name}`: {reason}")]
pub(crate) struct RuleError {
    /// The rule's name.
    pub(crate) name: String,
    /// Its condition as written, to find its line by.
    pub(crate) condition: String,
    reason: String,
}

/// The rules of `policy.rules`, as one layer of the call path.
pub(crate) struct Rules {
    rules: Vec<Rule>,
    env: Arc<Env>,
    /// Whether any rule reads the time (list verdicts then cannot be kept).
    reads_time: bool,
    /// Whether any rule reads the arguments (else a call's are not made CEL values).
    reads_arguments: bool,
    /// The fields of the arguments the rules read, when they read them only by field
    /// (else a call's are made a CEL value whole).
    argument_fields: Option<Vec<String>>,
    /// The clients' and items' values.
    known: Known,
}

impl std::fmt::Debug for Rules {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.rules.iter().map(|rule| rule.name.as_str()).collect();
        f.debug_struct("Rules").field("rules", &names).finish_non_exhaustive()
    }
}

impl Rules {
    /// Compiles `rules`: each has a name and exactly one of `deny` and `allow`, whose
    /// condition parses and reads no variable but `client`, `tool`, `arguments`, `now`.
    pub(crate) fn compile(rules: &[RuleConfig]) -> Result<Self, RuleError> {
        Self::counted_in(rules, &PolicyState::default())
    }

    /// Compiles `rules` as [`Self::compile`] does, their hits counted in `state`.
    pub(crate) fn counted_in(rules: &[RuleConfig], state: &PolicyState) -> Result<Self, RuleError> {
        let env = Arc::new(Env::stdlib());
        let compiled = rules.iter().map(|rule| compile_rule(&env, rule, state)).collect::<Result<Vec<_>, _>>()?;
        let reads_time = compiled.iter().any(|rule| rule.program.references().has_variable("now"));
        let reads_arguments = compiled.iter().any(|rule| rule.reads_arguments);
        let mut fields = Vec::new();
        let by_field = compiled.iter().all(|rule| argument_fields(&rule.program.expression().expr, &mut fields));
        let argument_fields = by_field.then(|| {
            fields.sort_unstable();
            fields.dedup();
            fields.into_iter().map(str::to_owned).collect()
        });
        Ok(Self { rules: compiled, env, reads_time, reads_arguments, argument_fields, known: Known::default() })
    }

    /// The context of a call of `item` by `caller`, its variables lent by `variables`.
    fn context<'v>(&self, variables: &'v Variables) -> Context<'v, 'v> {
        let mut context = Context::with_env(Arc::clone(&self.env));
        context.set_variable_resolver(variables);
        context
    }

    /// The first rule whose condition holds for the call, if any. A condition that
    /// cannot be evaluated for this call (it reads an argument the call lacks) does not
    /// hold for it.
    ///
    /// The verdicts of the rules that read neither the arguments nor the time are kept
    /// by client and item: a call evaluates only the other rules, and builds their
    /// variables (the arguments as a CEL value, the time) only when it comes to one.
    fn decide(&self, caller: &Caller, item: &Item<'_>, arguments: &serde_json::Value) -> Option<&Rule> {
        let (client, tool) = (self.known.client(caller), self.known.item(item));
        let fixed = tool.fixed_verdicts(&caller.client, &client, || {
            let variables = Variables::new(Arc::clone(&client), Arc::clone(&tool), None);
            let context = self.context(&variables);
            let verdict = |rule: &Rule| verdict(rule.program.execute(&context)).map_err(|why| why.to_string());
            self.rules.iter().map(|rule| rule.fixed.then(|| verdict(rule))).collect()
        });
        let mut variables = None;
        self.rules
            .iter()
            .zip(fixed.iter())
            .find(|(rule, fixed)| match fixed {
                Some(Ok(holds)) => *holds,
                Some(Err(why)) => {
                    tracing::debug!(rule = %rule.name, "{why}: it does not hold");
                    false
                }
                None => {
                    let variables = variables.get_or_insert_with(|| {
                        let arguments =
                            self.reads_arguments.then(|| arguments_value(arguments, self.argument_fields.as_deref()));
                        Variables::new(Arc::clone(&client), Arc::clone(&tool), arguments)
                    });
                    verdict(rule.program.execute(&self.context(variables))).unwrap_or_else(|why| {
                        tracing::debug!(rule = %rule.name, "{why}: it does not hold");
                        false
                    })
                }
            })
            .map(|(rule, _)| rule)
    }

    /// Whether `item` is refused to `caller` whatever the arguments: the first rule
    /// that holds for it whatever they are denies it, and no rule before it may allow
    /// it for some.
    ///
    /// A rule that reads the arguments is evaluated without them: CEL's `&&` and `||`
    /// decide without the side they do not need, so a condition that still gives a
    /// boolean gives it for any arguments; one that does not may hold for some calls.
    fn hidden(&self, client: Arc<KnownClient>, tool: Arc<KnownItem>) -> bool {
        let variables = Variables::new(client, tool, None);
        let context = self.context(&variables);
        for rule in &self.rules {
            match rule.program.execute(&context) {
                Ok(Value::Bool(true)) => return rule.effect == Effect::Deny,
                Ok(Value::Bool(false)) => {}
                // It may allow some calls: the item stays listed.
                _ if rule.reads_arguments && rule.effect == Effect::Allow => return false,
                _ => {}
            }
        }
        false
    }
}

impl CallLayer for Rules {
    fn hides(&self, caller: &Caller, item: &Item<'_>) -> bool {
        let (client, known) = (self.known.client(caller), self.known.item(item));
        if self.reads_time {
            return self.hidden(client, known);
        }
        known.hidden_from(&caller.client, &client, || self.hidden(Arc::clone(&client), Arc::clone(&known)))
    }

    fn check(&self, call: &CallContext<'_>) -> Result<(), ToolError> {
        let decided = self.decide(call.caller, &call.item, call.arguments);
        if let Some(rule) = decided {
            rule.hits.fetch_add(1, Ordering::Relaxed);
        }
        match decided {
            Some(rule) if rule.effect == Effect::Deny => Err(ToolError::Refused {
                layer: "policy",
                message: format!(
                    "the policy rule `{}` refuses `{}` to the client `{}`",
                    rule.name, call.item.name, call.caller.client
                ),
            }),
            _ => Ok(()),
        }
    }
}

/// Why a condition does not hold although it was evaluated.
enum NotHeld {
    /// It gave another value than a boolean.
    Gave(Value),
    /// It could not be evaluated (it reads an argument the call lacks, say).
    Failed(cel::ExecutionError),
}

impl std::fmt::Display for NotHeld {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NotHeld::Gave(other) => write!(f, "the condition gave {other:?}, not a boolean"),
            NotHeld::Failed(error) => write!(f, "the condition could not be evaluated ({error})"),
        }
    }
}

/// Whether a condition that gave `result` holds, or why it does not hold.
fn verdict(result: cel::ResolveResult) -> Result<bool, NotHeld> {
    match result {
        Ok(Value::Bool(holds)) => Ok(holds),
        Ok(other) => Err(NotHeld::Gave(other)),
        Err(error) => Err(NotHeld::Failed(error)),
    }
}

fn compile_rule(env: &Env, rule: &RuleConfig, state: &PolicyState) -> Result<Rule, RuleError> {
    let error = |condition: &str, reason: String| RuleError {
        name: rule.name.clone(),
        condition: condition.to_owned(),
        reason,
    };
    let (effect, condition) = match (&rule.deny, &rule.allow) {
        (Some(deny), None) => (Effect::Deny, deny),
        (None, Some(allow)) => (Effect::Allow, allow),
        (Some(deny), Some(_)) => return Err(error(deny, "has both `deny` and `allow`; give one".to_owned())),
        (None, None) => return Err(error(&rule.name, "has neither `deny` nor `allow`".to_owned())),
    };
    if rule.name.trim().is_empty() {
        return Err(error(condition, "has an empty name".to_owned()));
    }
    let program = env.compile(condition).map_err(|parse| error(condition, format!("not a CEL expression: {parse}")))?;
    let references = program.references();
    let mut bound = Vec::new();
    bound_variables(&program.expression().expr, &mut bound);
    let unknown = references.variables().into_iter().find(|name| !VARIABLES.contains(name) && !bound.contains(name));
    if let Some(unknown) = unknown {
        let known = VARIABLES.map(|name| format!("`{name}`")).join(", ");
        return Err(error(condition, format!("reads `{unknown}`, which is none of {known}")));
    }
    let reads_arguments = references.has_variable("arguments");
    let fixed = !reads_arguments && !references.has_variable("now");
    Ok(Rule { name: rule.name.clone(), effect, program, reads_arguments, fixed, hits: state.hits_of(rule) })
}

/// Whether `expr` reads `arguments` only by field (`arguments.path`, `has(arguments.path)`),
/// if at all; the fields it reads are added to `fields`. Any other read (`arguments` whole,
/// `arguments["path"]`, `size(arguments)`, `arguments.?path`) answers `false`.
fn argument_fields<'e>(expr: &'e Expr, fields: &mut Vec<&'e str>) -> bool {
    match expr {
        Expr::Select(select) if matches!(&select.operand.expr, Expr::Ident(name) if name == "arguments") => {
            fields.push(&select.field);
            true
        }
        Expr::Ident(name) => name != "arguments",
        _ => children(expr).into_iter().all(|inner| argument_fields(&inner.expr, fields)),
    }
}

/// The variables the comprehensions of `expr` bind (`k` in `arguments.keys.all(k, …)`).
fn bound_variables<'e>(expr: &'e Expr, bound: &mut Vec<&'e str>) {
    if let Expr::Comprehension(comprehension) = expr {
        bound.push(&comprehension.iter_var);
        bound.extend(comprehension.iter_var2.as_deref());
        bound.push(&comprehension.accu_var);
    }
    for inner in children(expr) {
        bound_variables(&inner.expr, bound);
    }
}

/// The expressions directly inside `expr`, for the walks over a condition above.
fn children(expr: &Expr) -> Vec<&IdedExpr> {
    fn entry(entry: &EntryExpr) -> [Option<&IdedExpr>; 2] {
        match entry {
            EntryExpr::StructField(field) => [Some(&field.value), None],
            EntryExpr::MapEntry(entry) => [Some(&entry.key), Some(&entry.value)],
        }
    }
    match expr {
        Expr::Select(select) => vec![&select.operand],
        Expr::Call(call) => call.target.iter().map(AsRef::as_ref).chain(&call.args).collect(),
        Expr::Comprehension(comprehension) => vec![
            &comprehension.iter_range,
            &comprehension.accu_init,
            &comprehension.loop_cond,
            &comprehension.loop_step,
            &comprehension.result,
        ],
        Expr::List(list) => list.elements.iter().collect(),
        Expr::Map(map) => map.entries.iter().flat_map(|inner| entry(&inner.expr)).flatten().collect(),
        Expr::Struct(structure) => structure.entries.iter().flat_map(|inner| entry(&inner.expr)).flatten().collect(),
        Expr::Ident(_) | Expr::Literal(_) | Expr::Unspecified => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use skill_core::{Agent, MemorySkill};

    use super::*;

    fn rule(name: &str, effect: &str, condition: &str) -> RuleConfig {
        let condition = Some(condition.to_owned());
        match effect {
            "deny" => RuleConfig { name: name.to_owned(), deny: condition, allow: None },
            _ => RuleConfig { name: name.to_owned(), deny: None, allow: condition },
        }
    }

    async fn agent(rules: &[RuleConfig]) -> Agent {
        let rules = Rules::compile(rules).unwrap();
        let agent = Agent::builder().with_compiled_skill(MemorySkill::new()).layer(Arc::new(rules)).build();
        agent.init_compiled_skills().await;
        agent
    }

    fn listed(agent: &Agent, client: &str) -> Vec<String> {
        agent.acting_for(Caller::new(client)).tools().iter().map(|tool| tool.name().to_owned()).collect()
    }

    #[tokio::test]
    async fn the_first_rule_that_holds_decides_and_a_refusal_names_it() {
        let agent = agent(&[
            rule("alice-may", "allow", r#"client.name == "alice""#),
            rule("no-forgetting", "deny", r#"tool.tool == "forget""#),
            rule("no-secrets", "deny", r#"arguments.key.startsWith("secret")"#),
        ])
        .await;
        let bob = agent.acting_for(Caller::new("bob"));
        let refused = bob.call_tool("memory__forget", json!({"key": "a"})).await.unwrap_err();
        assert_eq!(refused.to_string(), "the policy rule `no-forgetting` refuses `memory__forget` to the client `bob`");
        assert!(agent.acting_for(Caller::new("alice")).call_tool("memory__forget", json!({"key": "a"})).await.is_ok());
        // An argument-based rule refuses only the calls it holds for.
        assert!(bob.call_tool("memory__recall", json!({"key": "public"})).await.is_ok());
        let refused = bob.call_tool("memory__recall", json!({"key": "secret-plans"})).await.unwrap_err();
        assert!(refused.to_string().contains("`no-secrets`"), "{refused}");
        // A denial whatever the arguments leaves the tool out of that client's lists.
        assert_eq!(listed(&agent, "bob"), ["memory__list", "memory__recall", "memory__remember"]);
        assert_eq!(listed(&agent, "alice"), ["memory__forget", "memory__list", "memory__recall", "memory__remember"]);
    }

    #[tokio::test]
    async fn an_allow_that_reads_the_arguments_keeps_the_tool_listed_and_hints_have_mcps_defaults() {
        let agent = agent(&[
            rule("forget-drafts", "allow", r#"tool.tool == "forget" && arguments.key.startsWith("draft")"#),
            rule("writes-need-alice", "deny", r#"!tool.annotations.readOnlyHint && client.name != "alice""#),
        ])
        .await;
        assert_eq!(listed(&agent, "bob"), ["memory__forget", "memory__list", "memory__recall"]);
        let bob = agent.acting_for(Caller::new("bob"));
        assert!(bob.call_tool("memory__forget", json!({"key": "draft-1"})).await.is_ok());
        assert!(bob.call_tool("memory__forget", json!({"key": "final"})).await.is_err());
    }

    #[tokio::test]
    async fn claims_and_the_time_are_there_to_read() {
        let agent = agent(&[
            rule("admins-only", "deny", r#"tool.tool == "forget" && !("admins" in client.claims.groups)"#),
            rule("not-before-1970", "deny", r#"now < timestamp("1970-01-02T00:00:00Z")"#),
        ])
        .await;
        let claims = |groups: serde_json::Value| json!({"groups": groups}).as_object().unwrap().clone();
        let admin = agent.acting_for(Caller::new("oauth:ann").with_claims(claims(json!(["admins"]))));
        let other = agent.acting_for(Caller::new("oauth:bo").with_claims(claims(json!(["staff"]))));
        assert!(admin.call_tool("memory__forget", json!({"key": "a"})).await.is_ok());
        assert!(other.call_tool("memory__forget", json!({"key": "a"})).await.is_err());
        assert!(other.call_tool("memory__recall", json!({"key": "a"})).await.is_ok());
    }

    #[tokio::test]
    async fn a_kept_verdict_follows_the_clients_claims_and_the_item() {
        let agent = agent(&[rule("admins-only", "deny", r#"!("admins" in client.claims.groups)"#)]).await;
        let claims = |groups: serde_json::Value| json!({"groups": groups}).as_object().unwrap().clone();
        let as_ann = |groups| agent.acting_for(Caller::new("oauth:ann").with_claims(claims(groups)));
        // One client, whose claims change between its calls: each call is judged by its own.
        for (groups, allowed) in [(json!(["admins"]), true), (json!(["staff"]), false), (json!(["admins"]), true)] {
            let called = as_ann(groups.clone()).call_tool("memory__recall", json!({"key": "a"})).await;
            assert_eq!(called.is_ok(), allowed, "{groups}: {called:?}");
        }
        // A call of an unknown tool is judged for no skill, and refused innermost.
        let unknown = as_ann(json!(["admins"])).call_tool("memory__nothing", json!({})).await.unwrap_err();
        assert!(matches!(unknown, ToolError::NotFound { .. }), "{unknown:?}");
        let unknown = as_ann(json!(["staff"])).call_tool("memory__nothing", json!({})).await.unwrap_err();
        assert!(unknown.to_string().contains("`admins-only`"), "{unknown}");
    }

    #[tokio::test]
    async fn the_arguments_are_made_a_cel_value_by_field_when_every_rule_reads_them_so() {
        let fields = |conditions: &[&str]| {
            let rules: Vec<RuleConfig> =
                conditions.iter().enumerate().map(|(n, condition)| rule(&format!("r{n}"), "deny", condition)).collect();
            Rules::compile(&rules).unwrap().argument_fields
        };
        let by_field = [r#"has(arguments.value) && arguments.value == "secret""#, r#"arguments.key == "k""#];
        assert_eq!(fields(&by_field), Some(vec!["key".to_owned(), "value".to_owned()]));
        assert_eq!(fields(&[r#"client.name == "x""#]), Some(vec![]));
        for whole in ["size(arguments) > 1", r#"arguments["key"] == "k""#, r#""key" in arguments"#] {
            assert_eq!(fields(&[by_field[0], whole]), None, "{whole}");
        }
        // Either way, a rule reads what the call's arguments hold.
        for conditions in [vec![by_field[0]], vec![by_field[0], "size(arguments) > 5"]] {
            let rules: Vec<RuleConfig> = conditions.iter().map(|condition| rule("no", "deny", condition)).collect();
            let agent = agent(&rules).await;
            let secret = agent.call_tool("memory__remember", json!({"key": "a", "value": "secret"})).await;
            assert!(secret.unwrap_err().to_string().contains("`no`"), "{conditions:?}");
            assert!(agent.call_tool("memory__remember", json!({"key": "a", "value": "open"})).await.is_ok());
        }
    }

    #[test]
    fn a_rule_that_cannot_be_compiled_is_refused_with_its_name() {
        let error = |rules: &[RuleConfig]| Rules::compile(rules).unwrap_err().to_string();
        assert!(
            error(&[rule("broken", "deny", "client.name ==")])
                .starts_with("policy rule `broken`: not a CEL expression")
        );
        assert_eq!(
            error(&[rule("typo", "deny", r#"clinet.name == "bob""#)]),
            "policy rule `typo`: reads `clinet`, which is none of `client`, `tool`, `arguments`, `now`"
        );
        let both =
            RuleConfig { name: "both".to_owned(), deny: Some("true".to_owned()), allow: Some("true".to_owned()) };
        assert_eq!(error(&[both]), "policy rule `both`: has both `deny` and `allow`; give one");
        // A comprehension's own variable is no unknown variable.
        assert!(Rules::compile(&[rule("all", "deny", r#"arguments.keys.all(k, k.startsWith("x"))"#)]).is_ok());
    }
}
