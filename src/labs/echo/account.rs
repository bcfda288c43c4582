//! What the echo lab needs of an account: nothing. It creates nothing, calls no service, leaves
//! nothing behind and costs nothing: every default of the account traits says so.

impl crate::labs::Planned for super::EchoLab {}

impl crate::labs::Cleanup for super::EchoLab {}

impl crate::labs::Priced for super::EchoLab {}

impl crate::labs::Doctor for super::EchoLab {}
