//! The ID token's verification, with tokens signed here by the crate's own signing code: each
//! claim the issue names (signature, `iss`, `aud`, `exp`, `nonce`, `at_hash`) refused when wrong,
//! and a key the provider does not publish reported so that the keys are fetched again.

use super::*;
use openidconnect::core::CoreRsaPrivateSigningKey;
use openidconnect::{AccessToken, IdTokenClaims, JsonWebKeyId, PrivateSigningKey};
use serde_json::json;

const ISSUER: &str = "https://idp.example.test";
const KEY_1: &str = include_str!("testdata/key-1.pem");
const ROGUE: &str = include_str!("testdata/rogue.pem");

fn key(pem: &str, kid: &str) -> CoreRsaPrivateSigningKey {
    CoreRsaPrivateSigningKey::from_pem(pem, Some(JsonWebKeyId::new(kid.into()))).unwrap()
}

fn config() -> Oidc {
    Oidc {
        issuer: ISSUER.into(),
        client_id: "ponder".into(),
        client_secret: "ponder-test-secret".into(),
        scopes: vec!["email".into()],
        redirect_url: "https://chat.example.test/auth/oidc/callback".into(),
        post_logout_url: "https://chat.example.test/".into(),
        name: "IdP".into(),
        groups_claim: "groups".into(),
        allowed_groups: vec![],
        admin_groups: vec![],
        passwords: false,
        link_email: false,
    }
}

/// A provider that publishes `published` and says it has an end-session endpoint.
fn provider(published: &[&CoreRsaPrivateSigningKey]) -> (Sso, Known) {
    let meta: ProviderMetadataWithLogout = serde_json::from_value(json!({
        "issuer": ISSUER,
        "authorization_endpoint": format!("{ISSUER}/auth"),
        "token_endpoint": format!("{ISSUER}/token"),
        "jwks_uri": format!("{ISSUER}/jwks"),
        "end_session_endpoint": format!("{ISSUER}/session/end"),
        "response_types_supported": ["code"],
        "subject_types_supported": ["public"],
        "id_token_signing_alg_values_supported": ["RS256", "HS256"],
    }))
    .unwrap();
    let keys = published.iter().map(|k| k.as_verification_key()).collect();
    let meta = meta.set_jwks(JsonWebKeySet::new(keys));
    (Sso::new(&config()).unwrap(), Known { meta })
}

fn now() -> i64 {
    crate::server::store::now_ms() / 1000
}

fn claims(change: impl FnOnce(&mut serde_json::Value)) -> IdTokenClaims<Extra, CoreGenderClaim> {
    let mut c = json!({
        "iss": ISSUER,
        "aud": ["ponder"],
        "exp": now() + 300,
        "iat": now(),
        "sub": "alice-0f3a",
        "nonce": "the-nonce",
        "email": "alice@example.test",
        "email_verified": true,
        "preferred_username": "alice",
        "groups": ["family"],
    });
    change(&mut c);
    serde_json::from_value(c).unwrap()
}

fn signed(
    c: IdTokenClaims<Extra, CoreGenderClaim>,
    by: &CoreRsaPrivateSigningKey,
    access: &AccessToken,
) -> IdToken {
    IdToken::new(
        c,
        by,
        CoreJwsSigningAlgorithm::RsaSsaPkcs1V15Sha256,
        Some(access),
        None,
    )
    .unwrap()
}

fn check(token: &IdToken, access: &AccessToken) -> Result<Claims, ClaimsVerificationError> {
    let k1 = key(KEY_1, "key-1");
    let (sso, known) = provider(&[&k1]);
    let client = sso.client(&known).unwrap();
    sso.verify(&client, token, &Nonce::new("the-nonce".into()), access)
}

fn access() -> AccessToken {
    AccessToken::new("the-access-token".into())
}

#[test]
fn a_good_token_gives_its_claims_and_groups() {
    let token = signed(claims(|_| {}), &key(KEY_1, "key-1"), &access());
    let c = check(&token, &access()).unwrap();
    assert_eq!(c.subject, "alice-0f3a");
    assert_eq!(c.preferred_username.as_deref(), Some("alice"));
    assert!(c.email_verified);
    assert_eq!(c.groups, Some(vec!["family".to_string()]));
}

#[test]
fn a_token_for_another_audience_is_refused() {
    let token = signed(
        claims(|c| c["aud"] = json!(["another-app"])),
        &key(KEY_1, "key-1"),
        &access(),
    );
    assert!(matches!(
        check(&token, &access()),
        Err(ClaimsVerificationError::InvalidAudience(_))
    ));
}

#[test]
fn an_expired_token_is_refused() {
    let token = signed(
        claims(|c| {
            c["exp"] = json!(now() - 600);
            c["iat"] = json!(now() - 4200);
        }),
        &key(KEY_1, "key-1"),
        &access(),
    );
    assert!(matches!(
        check(&token, &access()),
        Err(ClaimsVerificationError::Expired(_))
    ));
}

#[test]
fn another_issuer_is_refused() {
    let token = signed(
        claims(|c| c["iss"] = json!("https://evil.example.test")),
        &key(KEY_1, "key-1"),
        &access(),
    );
    assert!(matches!(
        check(&token, &access()),
        Err(ClaimsVerificationError::InvalidIssuer(_))
    ));
}

#[test]
fn another_sign_in_s_nonce_is_refused() {
    let token = signed(
        claims(|c| c["nonce"] = json!("an-older-nonce")),
        &key(KEY_1, "key-1"),
        &access(),
    );
    assert!(matches!(
        check(&token, &access()),
        Err(ClaimsVerificationError::InvalidNonce(_))
    ));
    let token = signed(
        claims(|c| {
            c.as_object_mut().unwrap().remove("nonce");
        }),
        &key(KEY_1, "key-1"),
        &access(),
    );
    assert!(check(&token, &access()).is_err(), "no nonce at all");
}

#[test]
fn a_key_the_provider_does_not_publish_asks_for_the_keys_again() {
    let unknown = signed(claims(|_| {}), &key(ROGUE, "rogue"), &access());
    assert!(matches!(
        check(&unknown, &access()),
        Err(ClaimsVerificationError::SignatureVerification(
            SignatureVerificationError::NoMatchingKey
        ))
    ));
    let forged = signed(claims(|_| {}), &key(ROGUE, "key-1"), &access());
    assert!(
        matches!(
            check(&forged, &access()),
            Err(ClaimsVerificationError::SignatureVerification(
                SignatureVerificationError::CryptoError(_)
            ))
        ),
        "the published key id with another key's signature"
    );
}

#[test]
fn a_token_for_another_access_token_is_refused() {
    let token = signed(
        claims(|_| {}),
        &key(KEY_1, "key-1"),
        &AccessToken::new("someone-else's".into()),
    );
    assert!(matches!(
        check(&token, &access()),
        Err(ClaimsVerificationError::Other(_))
    ));
}

#[test]
fn a_token_keyed_by_the_client_secret_or_unsigned_is_refused() {
    let hmac = openidconnect::core::CoreHmacKey::new(b"ponder-test-secret".to_vec());
    let keyed = IdToken::new(
        claims(|_| {}),
        &hmac,
        CoreJwsSigningAlgorithm::HmacSha256,
        Some(&access()),
        None,
    )
    .unwrap();
    assert!(matches!(
        check(&keyed, &access()),
        Err(ClaimsVerificationError::SignatureVerification(
            SignatureVerificationError::DisallowedAlg(_)
        ))
    ));
    use base64::Engine;
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let good = signed(claims(|_| {}), &key(KEY_1, "key-1"), &access()).to_string();
    let payload = good.split('.').nth(1).unwrap();
    let unsigned: IdToken = format!("{}.{payload}.", b64.encode(r#"{"alg":"none"}"#))
        .parse()
        .unwrap();
    assert!(check(&unsigned, &access()).is_err());
}

#[tokio::test]
async fn sign_out_goes_to_the_provider_with_the_hint_and_the_way_back() {
    let k1 = key(KEY_1, "key-1");
    let (sso, known) = provider(&[&k1]);
    *sso.known.write().await = Some(Arc::new(known));
    let token = signed(claims(|_| {}), &k1, &access()).to_string();
    let url = sso.sign_out_url(&token).await.unwrap();
    let url = url::Url::parse(&url).unwrap();
    assert_eq!(url.path(), "/session/end");
    let q: std::collections::HashMap<_, _> = url.query_pairs().into_owned().collect();
    assert_eq!(q["id_token_hint"], token);
    assert_eq!(q["client_id"], "ponder");
    assert_eq!(q["post_logout_redirect_uri"], "https://chat.example.test/");
}

#[tokio::test]
async fn a_forged_key_id_cannot_make_ponder_fetch_keys_again_and_again() {
    let k1 = key(KEY_1, "key-1");
    let (sso, known) = provider(&[&k1]);
    let known = Arc::new(known);
    *sso.known.write().await = Some(known.clone());
    *sso.refetched.lock().await = Some(Instant::now());
    assert!(matches!(
        sso.refetch_keys(&known).await,
        Err(SsoError::Unverified(_))
    ));
}
