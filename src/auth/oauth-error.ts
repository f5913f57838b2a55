/** The error codes of RFC 6749, RFC 7591 and RFC 8707 that the gateway answers with. */
export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'unsupported_response_type'
  | 'invalid_scope'
  | 'invalid_target'
  | 'access_denied'
  | 'invalid_redirect_uri'
  | 'invalid_client_metadata';

/** A refusal in the words of the OAuth RFCs; the description is safe to show the client. */
export class OAuthError extends Error {
  readonly code: OAuthErrorCode;
  readonly status: number;

  constructor(code: OAuthErrorCode, description: string, status = 400) {
    super(description);
    this.name = 'OAuthError';
    this.code = code;
    this.status = status;
  }

  toJSON(): { error: string; error_description: string } {
    return { error: this.code, error_description: this.message };
  }
}

export const oauthError = (code: OAuthErrorCode, description: string, status?: number): OAuthError => new OAuthError(code, description, status);
