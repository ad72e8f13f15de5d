package statekeeper

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
)

// TLSOptions say how to reach a server that serves TLS; the same options as
// every other statekeeper client. Paths are PEM files.
type TLSOptions struct {
	// RootCA is the CA certificate(s) that signed the server's certificate
	// (empty: the system's roots).
	RootCA string
	// ClientCert and ClientKey are this client's certificate and key, sent
	// when the server requires one (mTLS); both or neither.
	ClientCert, ClientKey string
	// ServerName is the name the server's certificate is verified against
	// instead of the target's host (e.g. when dialling an IP address).
	ServerName string
}

// TLSOptionsFromEnv reads STATEKEEPER_TLS_ROOT_CA, STATEKEEPER_TLS_CLIENT_CERT,
// STATEKEEPER_TLS_CLIENT_KEY and STATEKEEPER_TLS_SERVER_NAME; nil when none is set.
func TLSOptionsFromEnv() *TLSOptions {
	o := TLSOptions{
		RootCA:     os.Getenv("STATEKEEPER_TLS_ROOT_CA"),
		ClientCert: os.Getenv("STATEKEEPER_TLS_CLIENT_CERT"),
		ClientKey:  os.Getenv("STATEKEEPER_TLS_CLIENT_KEY"),
		ServerName: os.Getenv("STATEKEEPER_TLS_SERVER_NAME"),
	}
	if o == (TLSOptions{}) {
		return nil
	}
	return &o
}

// Config builds the crypto/tls configuration of these options.
func (o TLSOptions) Config() (*tls.Config, error) {
	config := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: o.ServerName}
	if o.RootCA != "" {
		pem, err := os.ReadFile(o.RootCA)
		if err != nil {
			return nil, fmt.Errorf("statekeeper: root CA: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("statekeeper: root CA %s: no PEM certificate", o.RootCA)
		}
		config.RootCAs = pool
	}
	if (o.ClientCert == "") != (o.ClientKey == "") {
		return nil, errors.New("statekeeper: TLS client certificate and key go together")
	}
	if o.ClientCert != "" {
		pair, err := tls.LoadX509KeyPair(o.ClientCert, o.ClientKey)
		if err != nil {
			return nil, fmt.Errorf("statekeeper: client certificate: %w", err)
		}
		config.Certificates = []tls.Certificate{pair}
	}
	return config, nil
}

// WithTLSOptions connects over TLS with these options (Dial reports a file
// that cannot be read).
func WithTLSOptions(tlsOptions TLSOptions) Option {
	return func(o *options) {
		config, err := tlsOptions.Config()
		if err != nil {
			o.err = err
			return
		}
		WithTLS(config)(o)
	}
}
