//! The variables a rule reads (`client`, `tool`, `arguments`, `now`), as CEL values.
//!
//! Rules run on every call and for every item of every list, so a client's and an
//! item's values are built once and kept (a CEL value is a tree of boxes, costly to
//! build), and a call lends them to its rules; only the arguments and the time are the
//! call's own.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use cel::Value;
use cel::common::value::{CowVal, Val};
use cel::context::VariableResolver;
use cel::objects::{Key, Map};
use skill_core::{Caller, Item, ItemKind, ToolAnnotations, ToolSource};

/// An identity's claims.
type Claims = serde_json::Map<String, serde_json::Value>;

/// How many clients, items of a kind, or verdicts of an item are kept before they start
/// afresh.
const MAX_KEPT: usize = 10_000;

/// The values kept, by client and by item (items by kind, then name).
#[derive(Default)]
pub(super) struct Known {
    clients: Mutex<HashMap<String, Arc<KnownClient>>>,
    items: Mutex<HashMap<&'static str, HashMap<String, Arc<KnownItem>>>>,
}

/// A client's value, with the claims it was built from.
pub(super) struct KnownClient {
    claims: Claims,
    value: Box<dyn Val>,
}

/// An item's value, with what it was built from, and whether each client's lists
/// leave it out: kept as long as the item stays the same.
pub(super) struct KnownItem {
    skill: String,
    source: Option<ToolSource>,
    annotations: ToolAnnotations,
    value: Box<dyn Val>,
    /// By client: whether its lists leave the item out.
    hidden: Judged<bool>,
    /// By client: the verdicts of the rules that read neither the arguments nor the
    /// time, which are the same for every call of the item by that client (`None` for
    /// the other rules).
    fixed: Judged<FixedVerdicts>,
}

/// What was judged of an item for each client, with the client's value it was judged
/// with ([`Known::client`]'s, made afresh when the client's claims change): CEL has no
/// other input, so it holds for as long as that value is the client's.
struct Judged<T>(Mutex<HashMap<String, (Arc<KnownClient>, T)>>);

impl<T> Default for Judged<T> {
    fn default() -> Self {
        Self(Mutex::default())
    }
}

impl<T: Clone> Judged<T> {
    /// What was judged for the client `name`, whose value is `client`: as judged before
    /// with that same value, else as `judge` judges it now.
    fn get(&self, name: &str, client: &Arc<KnownClient>, judge: impl FnOnce() -> T) -> T {
        let kept = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        // The same value, not only equal claims: a value made afresh is judged afresh.
        if let Some((_, judged)) = kept.get(name).filter(|(with, _)| Arc::ptr_eq(with, client)) {
            return judged.clone();
        }
        drop(kept);
        let judged = judge();
        let mut kept = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if kept.len() >= MAX_KEPT {
            kept.clear();
        }
        kept.insert(name.to_owned(), (Arc::clone(client), judged.clone()));
        judged
    }
}

/// What a rule's condition gave: whether it holds, or why it does not (it gave no
/// boolean, or could not be evaluated).
pub(super) type Verdict = Result<bool, String>;

/// The verdicts of a policy's rules for one client and item, in order: `None` for a rule
/// that reads the arguments or the time, which each call evaluates.
pub(super) type FixedVerdicts = Arc<[Option<Verdict>]>;

impl KnownItem {
    fn is(&self, item: &Item<'_>) -> bool {
        self.skill == item.skill && self.source.as_ref() == item.source && self.annotations == item.annotations
    }

    /// Whether the lists of the client `name` (its value `client`) leave the item out: as
    /// judged before with that value, else as `judge` says now.
    pub(super) fn hidden_from(&self, name: &str, client: &Arc<KnownClient>, judge: impl FnOnce() -> bool) -> bool {
        self.hidden.get(name, client, judge)
    }

    /// The verdicts of the rules that read neither the arguments nor the time for the
    /// calls of the item by the client `name` (its value `client`): as reached before
    /// with that value, else as `judge` reaches them now. They are the same for every
    /// such call, and a call evaluates only the others.
    pub(super) fn fixed_verdicts(
        &self,
        name: &str,
        client: &Arc<KnownClient>,
        judge: impl FnOnce() -> Vec<Option<Verdict>>,
    ) -> FixedVerdicts {
        self.fixed.get(name, client, || judge().into())
    }
}

impl Known {
    /// The value of `caller`, made afresh when its claims changed.
    pub(super) fn client(&self, caller: &Caller) -> Arc<KnownClient> {
        let mut clients = self.clients.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(known) = clients.get(&caller.client).filter(|known| known.claims == caller.claims) {
            return Arc::clone(known);
        }
        let known = Arc::new(KnownClient { claims: caller.claims.clone(), value: boxed(client_value(caller)) });
        if clients.len() >= MAX_KEPT {
            clients.clear();
        }
        clients.insert(caller.client.clone(), Arc::clone(&known));
        known
    }

    /// The value of `item`, made afresh when the item changed.
    pub(super) fn item(&self, item: &Item<'_>) -> Arc<KnownItem> {
        let mut items = self.items.lock().unwrap_or_else(PoisonError::into_inner);
        let of_kind = items.entry(kind_name(item.kind)).or_default();
        if let Some(known) = of_kind.get(item.name).filter(|known| known.is(item)) {
            return Arc::clone(known);
        }
        let known = Arc::new(KnownItem {
            skill: item.skill.to_owned(),
            source: item.source.cloned(),
            annotations: item.annotations,
            value: boxed(item_value(item)),
            hidden: Judged::default(),
            fixed: Judged::default(),
        });
        if of_kind.len() >= MAX_KEPT {
            of_kind.clear();
        }
        of_kind.insert(item.name.to_owned(), Arc::clone(&known));
        known
    }
}

/// A call's variables, lent to its rules.
pub(super) struct Variables {
    client: Arc<KnownClient>,
    tool: Arc<KnownItem>,
    arguments: Option<Box<dyn Val>>,
    now: Box<dyn Val>,
}

impl Variables {
    /// The variables of a call of `tool` by `client` with `arguments` (`None` for a
    /// list, where rules that read them cannot decide, or when no rule reads them), as
    /// [`arguments_value`] makes them.
    pub(super) fn new(client: Arc<KnownClient>, tool: Arc<KnownItem>, arguments: Option<Value>) -> Self {
        Self {
            client,
            tool,
            arguments: arguments.map(boxed),
            now: boxed(Value::Timestamp(chrono::Utc::now().fixed_offset())),
        }
    }
}

/// A call's `arguments` as a CEL value: with `fields`, only those of its members (when the
/// rules read the arguments only by field, `arguments.path` or `has(arguments.path)`, no
/// other is read, and a large argument is not made a CEL value for nothing); else whole.
pub(super) fn arguments_value(arguments: &serde_json::Value, fields: Option<&[String]>) -> Value {
    let whole = || cel::to_value(arguments).unwrap_or(Value::Null);
    let (serde_json::Value::Object(members), Some(fields)) = (arguments, fields) else { return whole() };
    let picked: Option<HashMap<Key, Value>> = fields
        .iter()
        .filter_map(|field| Some((field, members.get(field)?)))
        .map(|(field, member)| Some((Key::from(field.clone()), cel::to_value(member).ok()?)))
        .collect();
    // A member that cannot be a CEL value makes the whole arguments none, as it would.
    picked.map_or_else(whole, |picked| Value::Map(Map { map: Arc::new(picked) }))
}

impl VariableResolver for Variables {
    fn resolve<'b>(&'b self, variable: &str) -> Option<CowVal<'b, 'b>> {
        let value: &dyn Val = match variable {
            "client" => &*self.client.value,
            "tool" => &*self.tool.value,
            "arguments" => self.arguments.as_deref()?,
            "now" => &*self.now,
            _ => return None,
        };
        Some(CowVal::Borrowed(value))
    }
}

fn boxed(value: Value) -> Box<dyn Val> {
    // Every value built here (maps, lists, strings, numbers, a timestamp) converts.
    Box::<dyn Val>::try_from(value).unwrap_or_else(|_| Box::new(cel::common::types::CelNull))
}

/// `client`: its `name`, and its identity's `claims` (empty for a client with a static
/// token).
fn client_value(caller: &Caller) -> Value {
    map([
        ("name", Value::from(caller.client.as_str())),
        ("claims", cel::to_value(&caller.claims).unwrap_or(Value::Null)),
    ])
}

/// `tool`: the item's agent-level `name`, its `skill`, `kind`, its `tool` name inside the
/// skill and `source` kind (tools only; else the name and ``), and `annotations` with
/// MCP's defaults filled in (not read-only, destructive, not idempotent, open world).
fn item_value(item: &Item<'_>) -> Value {
    let hints = item.annotations;
    let annotations = map([
        ("readOnlyHint", Value::Bool(hints.read_only_hint.unwrap_or(false))),
        ("destructiveHint", Value::Bool(hints.destructive_hint.unwrap_or(true))),
        ("idempotentHint", Value::Bool(hints.idempotent_hint.unwrap_or(false))),
        ("openWorldHint", Value::Bool(hints.open_world_hint.unwrap_or(true))),
    ]);
    let (tool, source) = match item.source {
        Some(source) => (source.tool.as_str(), source.kind.to_string()),
        None => (item.name, String::new()),
    };
    map([
        ("name", Value::from(item.name)),
        ("skill", Value::from(item.skill)),
        ("kind", Value::from(kind_name(item.kind))),
        ("tool", Value::from(tool)),
        ("source", Value::from(source)),
        ("annotations", annotations),
    ])
}

/// An item's kind as rules name it.
fn kind_name(kind: ItemKind) -> &'static str {
    match kind {
        ItemKind::Prompt => "prompt",
        ItemKind::Resource => "resource",
        ItemKind::ResourceTemplate => "resource_template",
        _ => "tool",
    }
}

fn map<const N: usize>(entries: [(&str, Value); N]) -> Value {
    let map: HashMap<Key, Value> = entries.into_iter().map(|(key, value)| (Key::from(key.to_owned()), value)).collect();
    Value::Map(Map { map: Arc::new(map) })
}
