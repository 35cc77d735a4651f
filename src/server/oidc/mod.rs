//! Single sign-on by OpenID Connect: discovery of the provider (at the first sign-in, again
//! after a failure), the authorization code flow with PKCE, `state` and `nonce`, the ID token
//! verified by the `openidconnect` crate against the provider's JWKS (fetched again, once, when
//! a token names a key Ponder has not seen: the provider rotated its keys), `at_hash`, the
//! userinfo claims, and the provider's own sign-out. What the claims mean is [`rules`].

pub mod rules;

use std::sync::Arc;
use std::time::{Duration, Instant};

use openidconnect::core::{
    CoreAuthDisplay, CoreAuthPrompt, CoreAuthenticationFlow, CoreErrorResponseType,
    CoreGenderClaim, CoreJsonWebKey, CoreJweContentEncryptionAlgorithm, CoreJwsSigningAlgorithm,
    CoreRevocableToken, CoreRevocationErrorResponse, CoreTokenIntrospectionResponse, CoreTokenType,
};
use openidconnect::{
    AccessTokenHash, AdditionalClaims, AuthorizationCode, ClaimsVerificationError, ClientId,
    ClientSecret, CsrfToken, EmptyExtraTokenFields, EndpointMaybeSet, EndpointNotSet, EndpointSet,
    IdTokenFields, IssuerUrl, JsonWebKeySet, LogoutRequest, Nonce, OAuth2TokenResponse,
    PkceCodeChallenge, PkceCodeVerifier, PostLogoutRedirectUrl, ProviderMetadataWithLogout,
    RedirectUrl, RequestTokenError, Scope, SignatureVerificationError, StandardErrorResponse,
    StandardTokenResponse, TokenResponse,
};
use tokio::sync::{Mutex, RwLock};

use crate::server::config::oidc::Oidc;
use crate::server::store::oidc::PendingLogin;
use rules::Claims;

/// The claims beyond the standard ones (the groups claim, whatever its name).
#[derive(Clone, Debug, Default, serde::Deserialize, serde::Serialize)]
pub struct Extra {
    #[serde(flatten)]
    pub rest: serde_json::Map<String, serde_json::Value>,
}

impl AdditionalClaims for Extra {}

type IdToken = openidconnect::IdToken<
    Extra,
    CoreGenderClaim,
    CoreJweContentEncryptionAlgorithm,
    CoreJwsSigningAlgorithm,
>;

type Tokens = StandardTokenResponse<
    IdTokenFields<
        Extra,
        EmptyExtraTokenFields,
        CoreGenderClaim,
        CoreJweContentEncryptionAlgorithm,
        CoreJwsSigningAlgorithm,
    >,
    CoreTokenType,
>;

type Client = openidconnect::Client<
    Extra,
    CoreAuthDisplay,
    CoreGenderClaim,
    CoreJweContentEncryptionAlgorithm,
    CoreJsonWebKey,
    CoreAuthPrompt,
    StandardErrorResponse<CoreErrorResponseType>,
    Tokens,
    CoreTokenIntrospectionResponse,
    CoreRevocableToken,
    CoreRevocationErrorResponse,
    EndpointSet,
    EndpointNotSet,
    EndpointNotSet,
    EndpointNotSet,
    EndpointMaybeSet,
    EndpointMaybeSet,
>;

/// Signatures Ponder accepts: the provider's keys only, never one keyed by the client secret.
const ALGORITHMS: [CoreJwsSigningAlgorithm; 9] = [
    CoreJwsSigningAlgorithm::RsaSsaPkcs1V15Sha256,
    CoreJwsSigningAlgorithm::RsaSsaPkcs1V15Sha384,
    CoreJwsSigningAlgorithm::RsaSsaPkcs1V15Sha512,
    CoreJwsSigningAlgorithm::RsaSsaPssSha256,
    CoreJwsSigningAlgorithm::RsaSsaPssSha384,
    CoreJwsSigningAlgorithm::RsaSsaPssSha512,
    CoreJwsSigningAlgorithm::EcdsaP256Sha256,
    CoreJwsSigningAlgorithm::EcdsaP384Sha384,
    CoreJwsSigningAlgorithm::EdDsa,
];

/// The least time between two fetches of the JWKS for unknown keys: a forged key id cannot
/// make Ponder hammer the provider.
const REFETCH_EVERY: Duration = Duration::from_secs(10);

/// Why a sign-in through the provider failed.
#[derive(Debug, PartialEq, Eq)]
pub enum SsoError {
    /// The provider could not be reached or answered nonsense to discovery.
    Unreachable(String),
    /// The provider refused (an error at its login, a code it does not take).
    Denied(String),
    /// The provider's answer did not verify: nobody is signed in on it.
    Unverified(String),
}

/// Who the provider signed in, verified.
#[derive(Debug)]
pub struct Verified {
    pub claims: Claims,
    /// The raw ID token, kept for the provider's sign-out.
    pub id_token: String,
}

/// The provider as discovered, with the keys last fetched.
struct Known {
    meta: ProviderMetadataWithLogout,
}

/// The identity provider Ponder signs people in with.
pub struct Sso {
    config: Oidc,
    http: reqwest::Client,
    known: RwLock<Option<Arc<Known>>>,
    refetched: Mutex<Option<Instant>>,
}

impl Sso {
    /// The provider of `config`, not yet asked anything (it need not be up when Ponder starts).
    pub fn new(config: &Oidc) -> Result<Self, reqwest::Error> {
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(Duration::from_secs(5))
            .timeout(Duration::from_secs(15))
            .build()?;
        Ok(Sso {
            config: config.clone(),
            http,
            known: RwLock::new(None),
            refetched: Mutex::new(None),
        })
    }

    pub fn config(&self) -> &Oidc {
        &self.config
    }

    async fn known(&self) -> Result<Arc<Known>, SsoError> {
        if let Some(known) = self.known.read().await.clone() {
            return Ok(known);
        }
        let mut slot = self.known.write().await;
        if let Some(known) = slot.clone() {
            return Ok(known);
        }
        let issuer = IssuerUrl::new(self.config.issuer.clone())
            .map_err(|e| SsoError::Unreachable(e.to_string()))?;
        let meta = ProviderMetadataWithLogout::discover_async(issuer, &self.http)
            .await
            .map_err(|e| SsoError::Unreachable(chain(&e)))?;
        let known = Arc::new(Known { meta });
        *slot = Some(known.clone());
        Ok(known)
    }

    fn client(&self, known: &Known) -> Result<Client, SsoError> {
        let redirect = RedirectUrl::new(self.config.redirect_url.clone())
            .map_err(|e| SsoError::Unreachable(e.to_string()))?;
        Ok(Client::from_provider_metadata(
            known.meta.clone(),
            ClientId::new(self.config.client_id.clone()),
            Some(ClientSecret::new(self.config.client_secret.clone())),
        )
        .set_redirect_uri(redirect))
    }

    /// Where to send the browser to sign in, and what to keep until it comes back.
    pub async fn start(&self, return_to: &str) -> Result<(String, PendingLogin), SsoError> {
        let known = self.known().await?;
        let client = self.client(&known)?;
        let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
        let mut request = client.authorize_url(
            CoreAuthenticationFlow::AuthorizationCode,
            CsrfToken::new_random,
            Nonce::new_random,
        );
        for scope in &self.config.scopes {
            request = request.add_scope(Scope::new(scope.clone()));
        }
        let (url, state, nonce) = request.set_pkce_challenge(challenge).url();
        Ok((
            url.to_string(),
            PendingLogin {
                state: state.secret().clone(),
                nonce: nonce.secret().clone(),
                verifier: verifier.secret().clone(),
                return_to: return_to.to_string(),
            },
        ))
    }

    /// The code the provider sent back, exchanged and verified.
    pub async fn finish(&self, login: &PendingLogin, code: &str) -> Result<Verified, SsoError> {
        let known = self.known().await?;
        let client = self.client(&known)?;
        let tokens: Tokens = client
            .exchange_code(AuthorizationCode::new(code.to_string()))
            .map_err(|e| SsoError::Unreachable(e.to_string()))?
            .set_pkce_verifier(PkceCodeVerifier::new(login.verifier.clone()))
            .request_async(&self.http)
            .await
            .map_err(|e| match e {
                RequestTokenError::ServerResponse(r) => {
                    SsoError::Denied(match r.error_description() {
                        Some(d) => format!("{}: {d}", r.error()),
                        None => r.error().to_string(),
                    })
                }
                RequestTokenError::Request(e) => SsoError::Unreachable(chain(&e)),
                other => SsoError::Unverified(chain(&other)),
            })?;
        let id_token = tokens
            .id_token()
            .ok_or_else(|| SsoError::Unverified("the answer has no ID token".into()))?
            .clone();
        let nonce = Nonce::new(login.nonce.clone());
        let (client, claims) = match self.verify(&client, &id_token, &nonce, tokens.access_token())
        {
            Err(ClaimsVerificationError::SignatureVerification(
                SignatureVerificationError::NoMatchingKey
                | SignatureVerificationError::AmbiguousKeyId(_),
            )) => {
                let refetched = self.refetch_keys(&known).await?;
                let client = self.client(&refetched)?;
                let claims = self
                    .verify(&client, &id_token, &nonce, tokens.access_token())
                    .map_err(|e| SsoError::Unverified(chain(&e)))?;
                (client, claims)
            }
            Err(e) => return Err(SsoError::Unverified(chain(&e))),
            Ok(claims) => (client, claims),
        };
        let claims = match client.user_info(
            tokens.access_token().clone(),
            Some(openidconnect::SubjectIdentifier::new(
                claims.subject.clone(),
            )),
        ) {
            Err(_) => claims,
            Ok(request) => {
                let info: openidconnect::UserInfoClaims<Extra, CoreGenderClaim> = request
                    .request_async(&self.http)
                    .await
                    .map_err(|e| SsoError::Unverified(format!("userinfo: {}", chain(&e))))?;
                claims.overlaid(Claims {
                    subject: info.subject().to_string(),
                    email: info.email().map(|e| e.to_string()),
                    email_verified: info.email_verified().unwrap_or(false),
                    preferred_username: info.preferred_username().map(|u| u.to_string()),
                    name: info.name().and_then(|n| n.get(None)).map(|n| n.to_string()),
                    groups: rules::groups_of(
                        &info.additional_claims().rest,
                        &self.config.groups_claim,
                    ),
                })
            }
        };
        Ok(Verified {
            claims,
            id_token: id_token.to_string(),
        })
    }

    fn verify(
        &self,
        client: &Client,
        token: &IdToken,
        nonce: &Nonce,
        access: &openidconnect::AccessToken,
    ) -> Result<Claims, ClaimsVerificationError> {
        let verifier = client.id_token_verifier().set_allowed_algs(ALGORITHMS);
        let claims = token.claims(&verifier, nonce)?;
        if let Some(expected) = claims.access_token_hash() {
            let alg = token
                .signing_alg()
                .map_err(ClaimsVerificationError::SignatureVerification)?;
            let key = token
                .signing_key(&verifier)
                .map_err(ClaimsVerificationError::SignatureVerification)?;
            let actual = AccessTokenHash::from_token(access, alg, key)
                .map_err(|e| ClaimsVerificationError::Unsupported(e.to_string()))?;
            if actual != *expected {
                return Err(ClaimsVerificationError::Other(
                    "at_hash does not match the access token".into(),
                ));
            }
        }
        Ok(Claims {
            subject: claims.subject().to_string(),
            email: claims.email().map(|e| e.to_string()),
            email_verified: claims.email_verified().unwrap_or(false),
            preferred_username: claims.preferred_username().map(|u| u.to_string()),
            name: claims
                .name()
                .and_then(|n| n.get(None))
                .map(|n| n.to_string()),
            groups: rules::groups_of(&claims.additional_claims().rest, &self.config.groups_claim),
        })
    }

    /// Fetches the provider's keys again (at most once every [`REFETCH_EVERY`], one fetch at a
    /// time), keeping them for later sign-ins.
    async fn refetch_keys(&self, seen: &Arc<Known>) -> Result<Arc<Known>, SsoError> {
        let mut last = self.refetched.lock().await;
        if let Some(newer) = self.known.read().await.clone() {
            if !Arc::ptr_eq(&newer, seen) {
                return Ok(newer);
            }
        }
        if last.is_some_and(|at| at.elapsed() < REFETCH_EVERY) {
            return Err(SsoError::Unverified(
                "the ID token is signed by a key the provider does not publish".into(),
            ));
        }
        *last = Some(Instant::now());
        let keys = JsonWebKeySet::fetch_async(seen.meta.jwks_uri(), &self.http)
            .await
            .map_err(|e| SsoError::Unreachable(chain(&e)))?;
        let known = Arc::new(Known {
            meta: seen.meta.clone().set_jwks(keys),
        });
        *self.known.write().await = Some(known.clone());
        Ok(known)
    }

    /// The provider's sign-out page for a session opened with `id_token`, returning to Ponder;
    /// `None` when the provider has none (or cannot be reached).
    pub async fn sign_out_url(&self, id_token: &str) -> Option<String> {
        let known = self.known().await.ok()?;
        let end = known
            .meta
            .additional_metadata()
            .end_session_endpoint
            .clone()?;
        let mut request =
            LogoutRequest::from(end).set_client_id(ClientId::new(self.config.client_id.clone()));
        if let Ok(back) = PostLogoutRedirectUrl::new(self.config.post_logout_url.clone()) {
            request = request.set_post_logout_redirect_uri(back);
        }
        if let Ok(hint) = id_token.parse::<IdToken>() {
            request = request.set_id_token_hint(&hint);
        }
        Some(request.http_get_url().to_string())
    }
}

#[cfg(test)]
mod tests;

/// An error with its sources, on one line.
fn chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}
