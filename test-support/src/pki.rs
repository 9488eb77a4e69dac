//! A private certificate authority and a server certificate it signed, made at run time
//! with rcgen, all PEM: real TLS for tests, nothing checked in.

use std::sync::atomic::{AtomicUsize, Ordering};

use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DnType, ExtendedKeyUsagePurpose, IsCa,
    KeyPair, KeyUsagePurpose,
};

/// A CA certificate, and a leaf certificate and its key signed by that CA.
pub struct Pki {
    /// The CA certificate (what a client must trust).
    pub ca: String,
    /// The server's certificate.
    pub cert: String,
    /// The server's private key.
    pub key: String,
}

impl Default for Pki {
    fn default() -> Self {
        Self::new()
    }
}

impl Pki {
    /// A leaf for `localhost` and `127.0.0.1`.
    pub fn new() -> Self {
        Self::for_names(&["localhost", "127.0.0.1"])
    }

    /// A leaf valid for exactly these names.
    pub fn for_names(names: &[&str]) -> Self {
        // Each CA a name of its own: a client trusting another CA of the same name would
        // take it for the issuer and report a bad signature, not an unknown issuer.
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
        ca.distinguished_name.push(
            DnType::CommonName,
            format!(
                "licensing test CA {}-{}",
                std::process::id(),
                NEXT.fetch_add(1, Ordering::Relaxed)
            ),
        );
        ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        let ca = CertifiedIssuer::self_signed(ca, KeyPair::generate().unwrap()).unwrap();
        let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
        let mut leaf = CertificateParams::new(names.clone()).unwrap();
        leaf.distinguished_name
            .push(DnType::CommonName, names[0].as_str());
        leaf.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        let key = KeyPair::generate().unwrap();
        let cert = leaf.signed_by(&key, &ca).unwrap();
        Self {
            ca: ca.pem(),
            cert: cert.pem(),
            key: key.serialize_pem(),
        }
    }
}
