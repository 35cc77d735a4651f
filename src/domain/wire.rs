//! Serde for the enums whose variants travel as bare names (`"assistant"`, `"no_answer"`).
//!
//! serde's derive builds a visitor for each such enum and each deserializer that reads it,
//! about 1.3 KB of the page's WebAssembly apiece. Here every one of them reads a string through
//! one visitor that returns the name's position in a table, shared by all the enums.

use std::fmt;

use serde::de::{Error, Visitor};
use utoipa::openapi::schema::{ArrayBuilder, ObjectBuilder, Schema, Type};
use utoipa::openapi::RefOr;

/// An enum of unit variants with a wire name each (the `snake_case` of the variant).
pub trait WireName: Copy + 'static {
    /// Every variant, in the order of [`WireName::NAMES`].
    const VARIANTS: &'static [Self];
    /// The wire name of each variant.
    const NAMES: &'static [&'static str];

    /// This variant's wire name.
    fn wire_name(self) -> &'static str;

    /// The variant a wire name stands for.
    fn from_wire_name(name: &str) -> Option<Self> {
        Self::NAMES
            .iter()
            .position(|n| *n == name)
            .map(|i| Self::VARIANTS[i])
    }
}

/// Reads a string and answers its position among `names`; any other name is refused with the
/// list of the known ones, as serde's derive does.
pub struct NameIndex(pub &'static [&'static str]);

impl Visitor<'_> for NameIndex {
    type Value = usize;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a variant name")
    }

    fn visit_str<E: Error>(self, name: &str) -> Result<usize, E> {
        self.0
            .iter()
            .position(|n| *n == name)
            .ok_or_else(|| E::unknown_variant(name, self.0))
    }
}

/// Declares [`WireName`], `Serialize` and `Deserialize` for a unit-only enum from its variants'
/// names: `wire_names!(Role { User = "user", Assistant = "assistant" });`.
macro_rules! wire_names {
    ($ty:ident { $($variant:ident = $name:literal),+ $(,)? }) => {
        impl $crate::domain::wire::WireName for $ty {
            const VARIANTS: &'static [Self] = &[$($ty::$variant),+];
            const NAMES: &'static [&'static str] = &[$($name),+];

            fn wire_name(self) -> &'static str {
                match self {
                    $($ty::$variant => $name,)+
                }
            }
        }

        impl serde::Serialize for $ty {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str($crate::domain::wire::WireName::wire_name(*self))
            }
        }

        impl<'de> serde::Deserialize<'de> for $ty {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let names = <$ty as $crate::domain::wire::WireName>::NAMES;
                let i = deserializer.deserialize_str($crate::domain::wire::NameIndex(names))?;
                Ok(<$ty as $crate::domain::wire::WireName>::VARIANTS[i])
            }
        }

        impl utoipa::PartialSchema for $ty {
            fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
                $crate::domain::wire::names_schema(<$ty as $crate::domain::wire::WireName>::NAMES)
            }
        }

        impl utoipa::ToSchema for $ty {
            fn name() -> std::borrow::Cow<'static, str> {
                std::borrow::Cow::Borrowed(stringify!($ty))
            }
        }
    };
}

pub(crate) use wire_names;

/// The JSON Schema of a string that is one of `names`: the API's description says which words
/// an enum travels as, from the same table its serde reads.
pub fn names_schema(names: &[&str]) -> RefOr<Schema> {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .enum_values(Some(names.iter().copied()))
        .into()
}

/// The JSON Schema of a list of `item`s (a set of flags written as the list of its names).
pub fn list_schema(item: RefOr<Schema>) -> RefOr<Schema> {
    ArrayBuilder::new().items(item).into()
}

#[cfg(test)]
pub(crate) mod tests {
    use std::fmt;

    use super::WireName;

    fn snake_case(ident: &str) -> String {
        let mut out = String::new();
        for (i, c) in ident.chars().enumerate() {
            if c.is_ascii_uppercase() {
                if i > 0 {
                    out.push('_');
                }
                out.push(c.to_ascii_lowercase());
            } else {
                out.push(c);
            }
        }
        out
    }

    /// Every variant is named the `snake_case` of its identifier (what `rename_all` gave), once,
    /// and reads back from its JSON; an unknown name is refused with the known ones listed.
    pub(crate) fn check<T>()
    where
        T: WireName + fmt::Debug + PartialEq + serde::Serialize + serde::de::DeserializeOwned,
    {
        assert_eq!(T::VARIANTS.len(), T::NAMES.len());
        for (v, name) in T::VARIANTS.iter().zip(T::NAMES) {
            assert_eq!(*name, snake_case(&format!("{v:?}")));
            assert_eq!(v.wire_name(), *name);
            assert_eq!(T::from_wire_name(name), Some(*v));
            let json = serde_json::to_string(v).unwrap();
            assert_eq!(json, format!("\"{name}\""));
            assert_eq!(serde_json::from_str::<T>(&json).unwrap(), *v);
            assert_eq!(
                serde_json::from_value::<T>(serde_json::Value::String(name.to_string())).unwrap(),
                *v
            );
        }
        let mut names = T::NAMES.to_vec();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), T::NAMES.len(), "names are unique");
        let err = serde_json::from_str::<T>("\"no_such_variant\"").unwrap_err();
        assert!(
            err.to_string()
                .contains("unknown variant `no_such_variant`"),
            "{err}"
        );
        assert!(err.to_string().contains(T::NAMES[0]), "{err}");
        assert!(serde_json::from_str::<T>("3").is_err());
        assert!(serde_json::from_str::<T>("null").is_err());
    }
}
