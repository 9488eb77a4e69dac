//! What the builders' setters take (the traits bounding them) and how an unset required
//! field or parameter is reported when the builder is converted.

/// A body builder's required field as its conversion reads it: a field never set (an
/// empty message, which the builder starts with instead of allocating its message) is
/// reported as typify words it; a setter's own error passes through.
pub fn supplied<T>(field: Result<T, String>, name: &str) -> Result<T, String> {
    unset_as(field, || format!("no value supplied for {name}"))
}

/// An operation builder's required parameter as `send` reads it: one never set is
/// reported as progenitor words it (see [`supplied`]).
pub fn initialized<T>(param: Result<T, String>, name: &str) -> Result<T, String> {
    unset_as(param, || format!("{name} was not initialized"))
}

/// A builder's value, its empty "not set" message replaced by `message`.
fn unset_as<T>(value: Result<T, String>, message: impl FnOnce() -> String) -> Result<T, String> {
    value.map_err(|e| if e.is_empty() { message() } else { e })
}

/// What an optional field's builder setter takes: the value itself (`"note"`, `7`, a
/// generated type), `Some(value)`, or `None`. For a string with rules (a length, a
/// pattern) the rule is checked when the builder is converted, and a broken one is reported
/// with the field's name.
pub trait IntoOptional<T> {
    /// The field's value, or why it breaks the field's rule.
    fn into_optional(self) -> Result<Option<T>, String>;
}

impl<T> IntoOptional<T> for T {
    fn into_optional(self) -> Result<Option<T>, String> {
        Ok(Some(self))
    }
}

impl<T> IntoOptional<T> for Option<T> {
    fn into_optional(self) -> Result<Option<T>, String> {
        Ok(self)
    }
}

impl IntoOptional<String> for &str {
    fn into_optional(self) -> Result<Option<String>, String> {
        Ok(Some(self.to_string()))
    }
}

impl IntoOptional<String> for &String {
    fn into_optional(self) -> Result<Option<String>, String> {
        Ok(Some(self.clone()))
    }
}

impl IntoOptional<String> for Option<&str> {
    fn into_optional(self) -> Result<Option<String>, String> {
        Ok(self.map(str::to_string))
    }
}

/// What a list field's builder setter takes: the items, or their builders (converted with
/// the outer builder; the first that breaks a rule is reported with its index and field).
/// A list of strings, such as asset numbers, also takes the spec's named string types:
/// `asset_nos(numbers)` with the `Vec<ShellNumber>` that `allocate_shell_nums` returned,
/// `&numbers[1..]`, or `&[number]`.
///
/// A list of a union's members, such as a batch's orders, takes the union's builder
/// (`order::types::builder::LicenseOrder`), which every member's builder and every built
/// value converts into: orders of different types mix in one array as
/// `order_list([buy.into(), revoke.into()])`, and a `Vec` of one type is taken as it is
/// (`order_list(vec![buy])`). A `vec![buy.into(), revoke.into()]` leaves the compiler
/// several `Vec`s to choose from: write it as an array, or name the builder
/// (`vec![builder::LicenseOrder::from(buy), …]`).
pub trait IntoItems<T> {
    /// The items, or the first one's broken rule, prefixed with its index (`[1] …`).
    fn into_items(self) -> Result<Vec<T>, String>;
}

impl<T> IntoItems<T> for Vec<T> {
    fn into_items(self) -> Result<Vec<T>, String> {
        Ok(self)
    }
}

/// The items of a list given as builders, each built; the first that fails is reported
/// with its index (`[1] …`). Called by the generated setters of unions' lists.
#[doc(hidden)]
pub fn build_items<B, T>(items: Vec<B>) -> Result<Vec<T>, String>
where
    T: TryFrom<B>,
    T::Error: std::fmt::Display,
{
    items
        .into_iter()
        .enumerate()
        .map(|(i, b)| T::try_from(b).map_err(|e| format!("[{i}] {e}")))
        .collect()
}

/// An array of items: `[product]`, or `[]` for an empty list without naming its type.
impl<T, const N: usize> IntoItems<T> for [T; N] {
    fn into_items(self) -> Result<Vec<T>, String> {
        Ok(self.into())
    }
}

/// Borrowed items, cloned: `&numbers[1..]`, `&numbers`.
impl<T: Clone> IntoItems<T> for &[T] {
    fn into_items(self) -> Result<Vec<T>, String> {
        Ok(self.to_vec())
    }
}

impl<T: Clone> IntoItems<T> for &Vec<T> {
    fn into_items(self) -> Result<Vec<T>, String> {
        Ok(self.clone())
    }
}

impl<T: Clone, const N: usize> IntoItems<T> for &[T; N] {
    fn into_items(self) -> Result<Vec<T>, String> {
        Ok(self.to_vec())
    }
}

/// A list of strings from string slices: `&["8000000001", "8000000002"]`. (An array of
/// `&str` by value is not taken, so that `[]` is a list of `String`s without naming it.)
impl IntoItems<String> for &[&str] {
    fn into_items(self) -> Result<Vec<String>, String> {
        Ok(self.iter().map(|s| s.to_string()).collect())
    }
}

impl<const N: usize> IntoItems<String> for &[&str; N] {
    fn into_items(self) -> Result<Vec<String>, String> {
        self.as_slice().into_items()
    }
}

impl IntoItems<String> for Vec<&str> {
    fn into_items(self) -> Result<Vec<String>, String> {
        Ok(self.into_iter().map(str::to_string).collect())
    }
}
