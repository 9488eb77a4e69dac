//! What the documents give for each operation, as a report counts it: the documented
//! business codes, each request enum and its values, the optional request fields, and
//! whether the operation pages; read through the spec model (`licensing-spec`).

use std::collections::{BTreeMap, BTreeSet};

use licensing_spec::openapiv3::{
    Components, OpenAPI, Parameter, ParameterSchemaOrContent, ReferenceOr, Schema, SchemaKind, Type,
};

/// One request field (a query parameter `?name`, or a body field by its dotted path:
/// `userList[].userName`; the items of a list whose entries are told apart by a tag are
/// named by the tag: `orderList[new_buy].crmCustomerId`).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Field {
    pub path: String,
    pub required: bool,
}

/// One operation as the documents give it.
#[derive(Clone, Debug)]
pub struct Operation {
    pub id: String,
    /// Upper-case HTTP method.
    pub method: String,
    /// The path template, with `{name}` parameters.
    pub path: String,
    /// Every documented error code (the service's and the operation's own).
    pub codes: Vec<String>,
    /// The code of a reply that applied part of the request, if the operation has one.
    pub partial_code: Option<String>,
    /// The page-number query parameter of a list operation.
    pub page_param: Option<String>,
    /// Every request field, in the documents' order.
    pub fields: Vec<Field>,
    /// Each request enum by its path, with the tags of tagged lists read as `[]`
    /// (`orderList[].orderType`): its documented values.
    pub enums: BTreeMap<String, BTreeSet<String>>,
    /// The paths of lists whose entries are told apart by a tag, with the tag's property.
    pub tagged: BTreeMap<String, String>,
}

/// Both services' operations, in the documents' order.
#[derive(Clone, Debug)]
pub struct Catalogue {
    pub operations: Vec<Operation>,
}

impl Catalogue {
    /// The documents the SDK was generated from.
    pub fn documents() -> Result<Self, String> {
        use licensing_sdk::operations::Service;
        let texts = [Service::Order, Service::Member].map(Service::openapi);
        Self::from_texts(&texts)
    }

    /// Reads OpenAPI documents given as YAML text.
    pub fn from_texts(texts: &[&str]) -> Result<Self, String> {
        let mut operations = Vec::new();
        for text in texts {
            let api = licensing_spec::load(text)?;
            operations.extend(read(&api)?);
        }
        Ok(Self { operations })
    }

    /// The operation `id`, or the one whose method and path template a request matches.
    pub fn find(&self, id: Option<&str>, method: &str, path: &str) -> Option<&Operation> {
        if let Some(id) = id {
            return self.operations.iter().find(|op| op.id == id);
        }
        self.operations
            .iter()
            .find(|op| op.method == method && template_matches(&op.path, path))
    }
}

/// `/a/{x}/b` matches `/a/7/b`.
fn template_matches(template: &str, path: &str) -> bool {
    let (mut t, mut p) = (template.split('/'), path.split('/'));
    loop {
        match (t.next(), p.next()) {
            (None, None) => return true,
            (Some(ts), Some(ps)) if ts.starts_with('{') && ts.ends_with('}') => {
                if ps.is_empty() {
                    return false;
                }
            }
            (Some(ts), Some(ps)) if ts == ps => {}
            _ => return false,
        }
    }
}

fn read(api: &OpenAPI) -> Result<Vec<Operation>, String> {
    let facts = licensing_spec::operations(api)?;
    let components = api.components.as_ref();
    let mut out = Vec::new();
    for (_, _, op) in api.operations() {
        let id = op.operation_id.as_deref().unwrap_or_default();
        let fact = facts
            .iter()
            .find(|f| f.id == id)
            .ok_or_else(|| format!("{id}: not among the operations' facts"))?;
        let mut walk = Walk {
            components,
            fields: Vec::new(),
            enums: BTreeMap::new(),
            tagged: BTreeMap::new(),
            stack: Vec::new(),
        };
        for p in &op.parameters {
            let Some(Parameter::Query { parameter_data, .. }) =
                licensing_spec::parameter(components, p)
            else {
                continue;
            };
            let path = format!("?{}", parameter_data.name);
            walk.fields.push(Field {
                path: path.clone(),
                required: parameter_data.required,
            });
            if let ParameterSchemaOrContent::Schema(schema) = &parameter_data.format
                && let Some(schema) = licensing_spec::schema(components, schema)
            {
                walk.enum_of(&path, schema);
            }
        }
        if let Some(body) = op
            .request_body
            .as_ref()
            .and_then(|b| licensing_spec::request_body(components, b))
            && let Some(schema) = body
                .content
                .get("application/json")
                .and_then(|m| m.schema.as_ref())
        {
            walk.schema("", schema_ref(schema), 0);
        }
        out.push(Operation {
            id: fact.id.clone(),
            method: fact.method.clone(),
            path: fact.path.clone(),
            codes: fact.error_codes.clone(),
            partial_code: fact.partial_code.clone(),
            page_param: fact.pagination.as_ref().map(|p| p.page_param.clone()),
            fields: walk.fields,
            enums: walk.enums,
            tagged: walk.tagged,
        });
    }
    Ok(out)
}

/// A schema or a reference to one, however it is held.
#[derive(Clone, Copy)]
enum SchemaRef<'a> {
    Plain(&'a ReferenceOr<Schema>),
    Boxed(&'a ReferenceOr<Box<Schema>>),
}

fn schema_ref(s: &ReferenceOr<Schema>) -> SchemaRef<'_> {
    SchemaRef::Plain(s)
}

struct Walk<'a> {
    components: Option<&'a Components>,
    fields: Vec<Field>,
    enums: BTreeMap<String, BTreeSet<String>>,
    tagged: BTreeMap<String, String>,
    /// The component schemas being walked, which a schema containing itself would repeat.
    stack: Vec<String>,
}

/// The deepest a body is walked; the documents' bodies are far shallower.
const MAX_DEPTH: usize = 12;

/// A path with the tags of tagged lists read as `[]`.
pub(crate) fn untagged(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    let mut inside = false;
    for c in path.chars() {
        match c {
            '[' => {
                inside = true;
                out.push('[');
            }
            ']' => {
                inside = false;
                out.push(']');
            }
            _ if inside => {}
            c => out.push(c),
        }
    }
    out
}

fn join(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_string()
    } else {
        format!("{path}.{name}")
    }
}

impl<'a> Walk<'a> {
    fn resolve(&mut self, s: SchemaRef<'a>) -> Option<(&'a Schema, Option<String>)> {
        let reference = match s {
            SchemaRef::Plain(ReferenceOr::Reference { reference })
            | SchemaRef::Boxed(ReferenceOr::Reference { reference }) => Some(reference.clone()),
            _ => None,
        };
        let schema = match s {
            SchemaRef::Plain(s) => licensing_spec::schema(self.components, s),
            SchemaRef::Boxed(s) => licensing_spec::boxed_schema(self.components, s),
        }?;
        Some((schema, reference))
    }

    fn schema(&mut self, path: &str, s: SchemaRef<'a>, depth: usize) {
        let Some((schema, reference)) = self.resolve(s) else {
            return;
        };
        if depth > MAX_DEPTH || reference.as_ref().is_some_and(|r| self.stack.contains(r)) {
            return;
        }
        if let Some(r) = &reference {
            self.stack.push(r.clone());
        }
        match &schema.schema_kind {
            SchemaKind::Type(Type::Object(o)) => {
                for (name, sub) in &o.properties {
                    let field = join(path, name);
                    self.fields.push(Field {
                        path: field.clone(),
                        required: o.required.contains(name),
                    });
                    if let Some((sub_schema, _)) = self.resolve(SchemaRef::Boxed(sub)) {
                        self.enum_of(&field, sub_schema);
                    }
                    self.schema(&field, SchemaRef::Boxed(sub), depth + 1);
                }
            }
            SchemaKind::Type(Type::Array(a)) => {
                if let Some(items) = &a.items {
                    self.schema(&format!("{path}[]"), SchemaRef::Boxed(items), depth + 1);
                }
            }
            SchemaKind::OneOf { one_of } => {
                match schema
                    .schema_data
                    .discriminator
                    .as_ref()
                    .filter(|d| !d.mapping.is_empty())
                {
                    Some(d) => {
                        self.tagged
                            .insert(path.to_string(), d.property_name.clone());
                        for (tag, target) in &d.mapping {
                            let qualified = match path.strip_suffix("[]") {
                                Some(list) => format!("{list}[{tag}]"),
                                None => format!("{path}[{tag}]"),
                            };
                            // A mapping names a schema by reference or by name.
                            let name = target
                                .strip_prefix(licensing_spec::SCHEMA_REF_PREFIX)
                                .unwrap_or(target);
                            let components = self.components;
                            if let Some(branch) = components.and_then(|c| c.schemas.get(name)) {
                                let name = format!("{}{name}", licensing_spec::SCHEMA_REF_PREFIX);
                                self.stack.push(name);
                                self.schema(&qualified, SchemaRef::Plain(branch), depth + 1);
                                self.stack.pop();
                            }
                        }
                    }
                    None => {
                        for branch in one_of {
                            self.schema(path, SchemaRef::Plain(branch), depth + 1);
                        }
                    }
                }
            }
            _ => {}
        }
        if reference.is_some() {
            self.stack.pop();
        }
    }

    /// Records the enum a field's schema gives, if any, under its untagged path.
    fn enum_of(&mut self, path: &str, schema: &Schema) {
        let values: Vec<String> = match &schema.schema_kind {
            SchemaKind::Type(Type::String(t)) => texts(&t.enumeration),
            SchemaKind::Type(Type::Integer(t)) => texts(&t.enumeration),
            SchemaKind::Type(Type::Number(t)) => texts(&t.enumeration),
            SchemaKind::Type(Type::Boolean(t)) => texts(&t.enumeration),
            SchemaKind::Any(a) => a.enumeration.iter().map(crate::text).collect(),
            _ => Vec::new(),
        };
        if !values.is_empty() {
            self.enums.entry(untagged(path)).or_default().extend(values);
        }
    }
}

/// The values of a typed schema's `enum`, as text.
fn texts<T: ToString>(values: &[Option<T>]) -> Vec<String> {
    values.iter().flatten().map(ToString::to_string).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_documents_give_each_operation_its_fields_enums_and_codes() {
        let c = Catalogue::documents().unwrap();
        assert_eq!(c.operations.len(), licensing_sdk::operations::ALL.len());
        let batch = c.operations.iter().find(|o| o.id == "batchOrder").unwrap();
        assert_eq!(
            batch.enums["orderList[].orderType"],
            ["delete_asset", "delete_product", "new_buy"]
                .map(String::from)
                .into()
        );
        assert_eq!(batch.tagged["orderList[]"], "orderType");
        let optional = |path: &str| {
            batch
                .fields
                .iter()
                .find(|f| f.path == path)
                .map(|f| !f.required)
        };
        assert_eq!(optional("orderList[new_buy].crmCustomerId"), Some(false));
        assert_eq!(
            optional("orderList[delete_asset].crmCustomerId"),
            Some(true)
        );
        assert_eq!(optional("channelOrderId"), Some(false));
        let list = c.operations.iter().find(|o| o.id == "listMembers").unwrap();
        assert_eq!(list.page_param.as_deref(), Some("pageNum"));
        assert!(list.codes.iter().any(|code| code == "80001"));
        assert_eq!(
            c.find(None, "GET", "/me/api/v1/enterprise/EG-1/members")
                .map(|o| o.id.as_str()),
            Some("listMembers")
        );
        assert!(
            c.find(None, "GET", "/me/api/v1/enterprise//members")
                .is_none()
        );
    }
}
