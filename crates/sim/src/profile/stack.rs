//! Stack files and their resolution: a stack names one part of each kind; resolving it parses,
//! overrides and validates every part into a [`StackSpec`].

use super::overrides::PartText;
use super::toml_errors::parse;
use super::validate::{
    validate_bridge, validate_controller, validate_drive, validate_host, validate_link,
};
use super::{
    BridgeProfile, ControllerKind, ControllerProfile, DriveProfile, DriverKind, HostProfile,
    LinkProfile, ProfileSet, SataLinkProfile, XhciVersion,
};
use crate::error::SimError;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A stack file: which part of each kind makes up the stack.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StackFile {
    pub description: String,
    pub host: String,
    pub controller: String,
    #[serde(default)]
    pub usb_link: Option<String>,
    #[serde(default)]
    pub bridge: Option<String>,
    pub sata_link: String,
    pub drive: String,
    /// Per-part key overrides, by role (`host`, `controller`, `usb_link`, `bridge`,
    /// `sata_link`, `drive`): the same chip in another slot is the same profile with, e.g.,
    /// `[overrides.controller.pcie] generation = 1`, so its shared parameters cannot drift.
    #[serde(default)]
    pub overrides: BTreeMap<String, toml::Table>,
    /// A fault plan every run of this stack gets, in the grammar of `storlab run --faults`
    /// (`docs/simulator.md`, Faults): e.g. a setup known for CRC errors on its cable. A plan
    /// given with `--faults` replaces it.
    #[serde(default)]
    pub faults: Option<String>,
}

/// The roles a stack's `[overrides]` may name.
pub const STACK_ROLES: [&str; 6] = [
    "host",
    "controller",
    "usb_link",
    "bridge",
    "sata_link",
    "drive",
];

/// A stack with every part resolved and validated: everything a `Simulator` needs.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StackSpec {
    pub name: String,
    pub description: String,
    pub host_name: String,
    pub host: HostProfile,
    /// Why `host` is not the host the stack file named (an OS driver that does not load on its
    /// controller), if it is not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host_fallback: Option<String>,
    pub controller_name: String,
    pub controller: ControllerProfile,
    pub usb_link_name: Option<String>,
    pub usb_link: Option<LinkProfile>,
    pub bridge_name: Option<String>,
    pub bridge: Option<BridgeProfile>,
    pub sata_link_name: String,
    pub sata_link: SataLinkProfile,
    pub drive_name: String,
    pub drive: DriveProfile,
    /// The stack file's fault plan (checked to parse), applied by `Simulator::new`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub faults: Option<String>,
}

impl ProfileSet {
    /// Resolve a stack by name: parse and validate it and every part it names.
    pub fn resolve(&self, stack_name: &str) -> Result<StackSpec, SimError> {
        let file = self
            .get("stacks", stack_name)
            .ok_or_else(|| SimError::UnknownStack {
                name: stack_name.to_string(),
                known: self
                    .stacks()
                    .into_iter()
                    .map(|(n, _)| n)
                    .collect::<Vec<_>>()
                    .join(", "),
            })?;
        let origin = file.origin.as_str();
        let stack: StackFile = parse(origin, &file.text)?;
        if let Some(role) = stack
            .overrides
            .keys()
            .find(|r| !STACK_ROLES.contains(&r.as_str()))
        {
            return Err(SimError::profile(
                origin,
                &format!("overrides.{role}"),
                format!("unknown part; overrides name one of {STACK_ROLES:?}"),
            ));
        }
        let part = |category: &'static str, key: &'static str, name: &str| {
            self.get(category, name)
                .map(|f| PartText {
                    origin: f.origin.as_str(),
                    text: f.text.as_str(),
                    overrides: stack.overrides.get(key),
                    stack_origin: origin,
                    role: key,
                })
                .ok_or_else(|| {
                    SimError::profile(origin, key, format!("no {category} profile named `{name}`"))
                })
        };

        let mut host: HostProfile = part("hosts", "host", &stack.host)?.load(validate_host)?;
        let controller: ControllerProfile =
            part("controllers", "controller", &stack.controller)?.load(validate_controller)?;
        // An OS whose UAS driver loads only on some controllers runs its BOT driver on the
        // others (Windows 8: HardWare.fr 2013 p. 3, DOMAIN.md §2).
        let mut host_name = stack.host.clone();
        let mut host_fallback = None;
        let loads_here = host
            .uas_loads_on
            .as_ref()
            .is_none_or(|controllers| controllers.contains(&stack.controller));
        if !loads_here {
            let fallback = host
                .bot_fallback_host
                .clone()
                .expect("validated: uas_loads_on names bot_fallback_host");
            let bot: HostProfile = part("hosts", "host", &fallback)?.load(validate_host)?;
            if bot.driver != DriverKind::Bot {
                return Err(SimError::profile(
                    origin,
                    "host",
                    format!(
                        "`{}`'s bot_fallback_host `{fallback}` is not a BOT driver",
                        stack.host
                    ),
                ));
            }
            host_fallback = Some(format!(
                "host `{}` loads its UAS driver only on {} and not on `{}`{}: the host uses its \
                 BOT driver `{fallback}`",
                stack.host,
                host.uas_loads_on.as_deref().unwrap_or_default().join(", "),
                stack.controller,
                match controller.xhci_version {
                    Some(XhciVersion::Draft096) => " (xHCI 0.96)",
                    Some(XhciVersion::V100) => " (announced xHCI 1.0)",
                    None => "",
                }
            ));
            host = bot;
            host_name = fallback;
        }
        let usb_link = match &stack.usb_link {
            Some(name) => {
                let link: LinkProfile = part("links", "usb_link", name)?.load(validate_link)?;
                if matches!(link, LinkProfile::Sata(_)) {
                    return Err(SimError::profile(
                        origin,
                        "usb_link",
                        format!("`{name}` is a SATA link, not a USB link"),
                    ));
                }
                Some(link)
            }
            None => None,
        };
        let bridge = match &stack.bridge {
            Some(name) => Some(part("bridges", "bridge", name)?.load(validate_bridge)?),
            None => None,
        };
        let sata_link = match part("links", "sata_link", &stack.sata_link)?.load(validate_link)? {
            LinkProfile::Sata(p) => p,
            _ => {
                return Err(SimError::profile(
                    origin,
                    "sata_link",
                    format!("`{}` is not a SATA link", stack.sata_link),
                ))
            }
        };
        let drive: DriveProfile = part("drives", "drive", &stack.drive)?.load(validate_drive)?;

        // The parts must fit together.
        let usb = matches!(host.driver, DriverKind::Bot | DriverKind::Uas);
        if usb {
            if controller.kind != ControllerKind::Xhci {
                return Err(SimError::profile(
                    origin,
                    "controller",
                    "a USB driver (bot/uas) needs an xhci controller",
                ));
            }
            if usb_link.is_none() {
                return Err(SimError::profile(
                    origin,
                    "usb_link",
                    "missing: a USB driver (bot/uas) needs a usb_link",
                ));
            }
            if bridge.is_none() {
                return Err(SimError::profile(
                    origin,
                    "bridge",
                    "missing: a USB driver (bot/uas) needs a bridge",
                ));
            }
        } else {
            if controller.kind != ControllerKind::Ahci {
                return Err(SimError::profile(
                    origin,
                    "controller",
                    "a SATA driver needs an ahci controller",
                ));
            }
            if stack.usb_link.is_some() || stack.bridge.is_some() {
                return Err(SimError::profile(
                    origin,
                    if stack.usb_link.is_some() {
                        "usb_link"
                    } else {
                        "bridge"
                    },
                    "a direct SATA stack has no USB link or bridge",
                ));
            }
        }

        if let Some(spec) = &stack.faults {
            crate::fault::FaultPlan::parse(spec)
                .map_err(|why| SimError::profile(origin, "faults", why))?;
        }

        Ok(StackSpec {
            name: stack_name.to_string(),
            description: stack.description,
            host_name,
            host,
            host_fallback,
            controller_name: stack.controller,
            controller,
            usb_link_name: stack.usb_link,
            usb_link,
            bridge_name: stack.bridge,
            bridge,
            sata_link_name: stack.sata_link,
            sata_link,
            drive_name: stack.drive,
            drive,
            faults: stack.faults,
        })
    }
}
