//! Which CID policies exist: the one list every registration is generated from.
//!
//! A policy is a type implementing [`super::policy::CidPolicy`] in its own module of
//! `model::policies`. Registering it takes two lines: `pub mod its_module;` in
//! `policies/mod.rs`, and `Variant its_module,` in [`registered_policies`] below (the type is
//! `its_module::Variant`). From the list come [`PolicyKind`] (this file: names only, so the run
//! records can name a policy without knowing the policies) and, in `registry.rs`, the enum of
//! the concrete policies with its static dispatch and `PolicyKind::build`.

/// Calls `$callback!` with the registered policies as `[Variant module, ...]`, in the order of
/// `PolicyKind::ALL` (lists, `--compare`, and the order of `PolicyKind`'s `Ord`).
macro_rules! registered_policies {
    ($callback:ident! $($args:tt)*) => {
        $callback! { $($args)* [
            LazyCompact lazy_compact,
            ResumeBatch resume_batch,
            OwnerMode owner_mode,
        ] }
    };
}
pub(crate) use registered_policies;

macro_rules! define_policy_kind {
    ([$($variant:ident $module:ident),* $(,)?]) => {
        /// Which CID policy a model runs. Its names (`id`, `describe`) and what it builds are in
        /// `registry.rs`, from each policy's `CidPolicy` constants.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum PolicyKind {
            $($variant,)*
        }

        impl PolicyKind {
            /// Every registered policy.
            pub const ALL: [PolicyKind; [$(PolicyKind::$variant),*].len()] =
                [$(PolicyKind::$variant),*];
        }
    };
}
registered_policies!(define_policy_kind!);

impl std::fmt::Display for PolicyKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.id())
    }
}

impl serde::Serialize for PolicyKind {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.id())
    }
}
