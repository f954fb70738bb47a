//! What each registered policy (`kind.rs`) is: [`AnyPolicy`], the enum of the concrete policy
//! types; `with_policy!`, the one `match` that turns it into a static call on the concrete type;
//! and `PolicyKind`'s names and `build`, from each policy's `CidPolicy` constants.

use super::kind::{PolicyKind, registered_policies};
use super::params::{Params, Regime};
use super::policy::CidPolicy;

macro_rules! define_registry {
    ($d:tt [$($variant:ident $module:ident),* $(,)?]) => {
        /// One model's policy state: any registered policy.
        #[derive(Clone)]
        pub enum AnyPolicy {
            $($variant(super::$module::$variant),)*
        }

        /// `with_policy!(any_policy, p => expr)`: `expr` with `p` bound to the concrete policy
        /// (by reference, as `any_policy` is given), one static `match` for any number of calls.
        macro_rules! with_policy {
            ($d any:expr, $d p:ident => $d body:expr) => {
                match $d any {
                    $($crate::model::policies::registry::AnyPolicy::$variant($d p) => $d body,)*
                }
            };
        }
        pub(crate) use with_policy;

        impl PolicyKind {
            /// The name used on the command line and in JSON.
            pub fn id(self) -> &'static str {
                match self {
                    $(PolicyKind::$variant => <super::$module::$variant as CidPolicy>::ID,)*
                }
            }

            pub fn describe(self) -> &'static str {
                match self {
                    $(PolicyKind::$variant => {
                        <super::$module::$variant as CidPolicy>::DESCRIPTION
                    })*
                }
            }

            /// rseq emission regime of the kernels that ran this policy (§1.2).
            pub fn default_regime(self) -> Regime {
                match self {
                    $(PolicyKind::$variant => <super::$module::$variant as CidPolicy>::REGIME,)*
                }
            }

            /// A fresh policy of this kind; `params` are resolved (`cpus`, `hz`, `batch` > 0).
            pub fn build(self, params: &Params) -> AnyPolicy {
                match self {
                    $(PolicyKind::$variant => {
                        AnyPolicy::$variant(<super::$module::$variant as CidPolicy>::new(params))
                    })*
                }
            }
        }
    };
}
registered_policies!(define_registry! $);

impl PolicyKind {
    pub fn from_id(s: &str) -> Option<PolicyKind> {
        PolicyKind::ALL.into_iter().find(|p| p.id() == s)
    }
}

impl AnyPolicy {
    pub fn kind(&self) -> PolicyKind {
        macro_rules! kind_of {
            ($d:tt [$($variant:ident $module:ident),* $(,)?]) => {
                match self {
                    $(AnyPolicy::$variant(_) => PolicyKind::$variant,)*
                }
            };
        }
        registered_policies!(kind_of! $)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_builds_its_policy_and_names_round_trip() {
        for kind in PolicyKind::ALL {
            assert_eq!(PolicyKind::from_id(kind.id()), Some(kind));
            assert_eq!(kind.build(&Params::with_cpus(4)).kind(), kind);
            assert!(!kind.describe().is_empty());
        }
    }
}
