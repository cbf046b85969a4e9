package api

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/cowboy-foundation/cowboy/attest"
	"github.com/cowboy-foundation/cowboy/chain/apitypes"
	"github.com/cowboy-foundation/cowboy/chain/store"
	"github.com/cowboy-foundation/cowboy/chain/system/runners"
	"github.com/cowboy-foundation/cowboy/chain/system/secrets"
	"github.com/cowboy-foundation/cowboy/chain/system/tee"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/gin-gonic/gin"
)

func (s *Server) registerTEERoutes(v1 *gin.RouterGroup) {
	v1.GET("/tee/params", s.teeParams)
	v1.GET("/tee/attestations/:addr", s.teeAttestation)
	v1.GET("/tee/jobs/:id", s.teeJob)
	v1.GET("/tee/grants/:runner", s.teeRunnerGrants)
	v1.GET("/secrets/:owner", s.secrets)
	v1.GET("/secrets/:owner/:name", s.secret)
	v1.GET("/secrets/:owner/:name/grants/:runner", s.secretGrant)
}

func policyJSON(p *attest.Policy) apitypes.TEEPolicy {
	return apitypes.TEEPolicy{UniqueID: nonNilBytes(p.UniqueID), SignerID: nonNilBytes(p.SignerID), ProductID: p.ProductID,
		MinSecurityVersion: p.MinSecurityVersion, AllowDebug: p.AllowDebug, AllowOutdatedTCB: p.AllowOutdatedTCB, AllowSimulation: p.AllowSimulation}
}

func nonNilBytes(b types.Bytes) types.Bytes {
	if b == nil {
		return types.Bytes{}
	}
	return b
}

func (s *Server) teeParams(c *gin.Context) {
	p := s.b.TEEParams()
	c.JSON(http.StatusOK, apitypes.TEEParams{Policy: policyJSON(&p.Policy), PolicyID: p.Policy.ID(), AttestationTTL: p.AttestationTTL,
		MaxSecretBytes: p.MaxSecretBytes, MaxGrants: p.MaxGrants, MaxSecrets: p.MaxSecrets, SGXSupported: attest.SGXSupported})
}

func (s *Server) teeAttestation(c *gin.Context) {
	addr, ok := parseAddress(c, c.Param("addr"))
	if !ok {
		return
	}
	p := s.b.TEEParams()
	var out apitypes.Attestation
	err := s.b.View(func(v *store.View) error {
		a, err := tee.ReadAttestation(v, addr)
		if err != nil {
			return err
		}
		if a == nil {
			return errors.Join(store.ErrNotFound, fmt.Errorf("runner %s has no attestation", addr))
		}
		rn, err := runners.ReadRunner(v, addr)
		if err != nil {
			return err
		}
		h := v.Head().Height
		out = apitypes.Attestation{Runner: a.Runner, Backend: attest.Backend(a.Backend).String(), UniqueID: a.UniqueID, SignerID: a.SignerID,
			ProductID: a.ProductID, SecurityVersion: a.SecurityVersion, Debug: a.Debug, TCB: attest.TCBStatus(a.TCB).String(),
			ResultKey: a.ResultKey, SealKey: a.SealKey, EvidenceHash: a.EvidenceHash, PolicyID: a.PolicyID, VerifiedAt: a.VerifiedAt,
			ExpiresAt: a.ExpiresAt, Height: h}
		out.Valid = rn != nil && rn.Status == runners.RunnerActive && a.Current(h, rn.ResultKey, p.Policy.ID())
		return nil
	})
	if err != nil {
		failErr(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}

func (s *Server) teeJob(c *gin.Context) {
	id, err := types.ParseHash(c.Param("id"))
	if err != nil {
		fail(c, http.StatusBadRequest, "bad_hash", err.Error())
		return
	}
	out := []apitypes.ResultAttestation{}
	err = s.b.View(func(v *store.View) error {
		rs, err := tee.ReadResultAttestations(v, id)
		for _, r := range rs {
			out = append(out, apitypes.ResultAttestation{JobID: r.JobID, Runner: r.Runner, ResultHash: r.ResultHash, UniqueID: r.UniqueID,
				EvidenceHash: r.EvidenceHash, Height: r.Height})
		}
		return err
	})
	if err != nil {
		failErr(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}

func grantJSON(g *secrets.SecretGrant) apitypes.SecretGrant {
	return apitypes.SecretGrant{Owner: g.Owner, Name: g.Name, Version: g.Version, Runner: g.Runner, SealKey: g.SealKey,
		SealedKey: g.SealedKey, UniqueID: g.UniqueID, GrantedAt: g.GrantedAt}
}

func secretJSON(sec *secrets.Secret, full bool) apitypes.Secret {
	out := apitypes.Secret{Owner: sec.Owner, Name: sec.Name, Version: sec.Version, Policy: policyJSON(&sec.Policy), PolicyID: sec.Policy.ID(),
		Grants: sec.Grants, CreatedAt: sec.CreatedAt, UpdatedAt: sec.UpdatedAt}
	if full {
		out.Ciphertext, out.OwnerKey, out.GrantList = sec.Ciphertext, sec.OwnerKey, []apitypes.SecretGrant{}
	}
	return out
}

func (s *Server) teeRunnerGrants(c *gin.Context) {
	addr, ok := parseAddress(c, c.Param("runner"))
	if !ok {
		return
	}
	out := []apitypes.SecretGrant{}
	err := s.b.View(func(v *store.View) error {
		gs, err := secrets.ListRunnerGrants(v, addr)
		for _, g := range gs {
			out = append(out, grantJSON(g))
		}
		return err
	})
	if err != nil {
		failErr(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}

func (s *Server) secrets(c *gin.Context) {
	owner, ok := parseAddress(c, c.Param("owner"))
	if !ok {
		return
	}
	out := []apitypes.Secret{}
	err := s.b.View(func(v *store.View) error {
		ss, err := secrets.ListSecrets(v, owner)
		for _, sec := range ss {
			out = append(out, secretJSON(sec, false))
		}
		return err
	})
	if err != nil {
		failErr(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}

func secretName(c *gin.Context) (string, bool) {
	name := c.Param("name")
	if !secrets.SecretNameRE.MatchString(name) {
		fail(c, http.StatusBadRequest, "bad_name", fmt.Sprintf("secret name %q must match %s", name, secrets.SecretNameRE))
		return "", false
	}
	return name, true
}

func (s *Server) secret(c *gin.Context) {
	owner, ok := parseAddress(c, c.Param("owner"))
	if !ok {
		return
	}
	name, ok := secretName(c)
	if !ok {
		return
	}
	var out apitypes.Secret
	err := s.b.View(func(v *store.View) error {
		sec, err := secrets.ReadSecret(v, owner, name)
		if err != nil {
			return err
		}
		if sec == nil {
			return errors.Join(store.ErrNotFound, fmt.Errorf("%s has no secret %q", owner, name))
		}
		out = secretJSON(sec, true)
		gs, err := secrets.ListSecretGrants(v, owner, name)
		for _, g := range gs {
			out.GrantList = append(out.GrantList, grantJSON(g))
		}
		return err
	})
	if err != nil {
		failErr(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}

func (s *Server) secretGrant(c *gin.Context) {
	owner, ok := parseAddress(c, c.Param("owner"))
	if !ok {
		return
	}
	name, ok := secretName(c)
	if !ok {
		return
	}
	runner, ok := parseAddress(c, c.Param("runner"))
	if !ok {
		return
	}
	var out apitypes.SecretGrant
	err := s.b.View(func(v *store.View) error {
		g, err := secrets.ReadSecretGrant(v, owner, name, runner)
		if err != nil {
			return err
		}
		if g == nil {
			return errors.Join(store.ErrNotFound, fmt.Errorf("secret %s/%s is not granted to %s", owner, name, runner))
		}
		out = grantJSON(g)
		return nil
	})
	if err != nil {
		failErr(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}
