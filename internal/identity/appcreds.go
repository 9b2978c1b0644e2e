package identity

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/applicationcredentials"
)

// AppCredSpec is an application credential to create.
type AppCredSpec struct {
	Name string
	// Owner marks the credential's description, so that one this suite created and
	// never recorded (a crash before the Secret write) can be found and revoked.
	Owner        string
	Roles        []string
	AccessRules  []AccessRule
	Unrestricted bool
	ExpiresAt    time.Time
}

// AccessRule allows one kind of API call.
type AccessRule struct{ Service, Path, Method string }

// AppCred is an application credential as created; Secret is only known then.
type AppCred struct {
	ID, Secret string
	ExpiresAt  time.Time
}

// ownerMark is how Owner appears in a credential's description.
func ownerMark(owner string) string { return "[owner " + owner + "]" }

// CreateAppCred creates an application credential of the client's own user (Keystone
// lets only the user create them), on the project its token is scoped to.
func (c *Client) CreateAppCred(ctx context.Context, want AppCredSpec) (*AppCred, error) {
	opts := applicationcredentials.CreateOpts{
		Name:         want.Name,
		Description:  "Created by keystone-operator " + ownerMark(want.Owner),
		Unrestricted: want.Unrestricted,
	}
	for _, r := range want.Roles {
		opts.Roles = append(opts.Roles, applicationcredentials.Role{Name: r})
	}
	for _, r := range want.AccessRules {
		opts.AccessRules = append(opts.AccessRules, applicationcredentials.AccessRule{Service: r.Service, Path: r.Path, Method: r.Method})
	}
	if !want.ExpiresAt.IsZero() {
		// gophercloud writes the time without a zone, which Keystone reads as UTC.
		expires := want.ExpiresAt.UTC()
		opts.ExpiresAt = &expires
	}
	userID := c.UserID()
	created, err := applicationcredentials.Create(ctx, c.sc, userID, opts).Extract()
	err = c.staleUser(err, userID)
	if notFound(err) {
		// "Role X is not defined": the request, not the session.
		err = &RefusedError{Err: err}
	}
	if err != nil {
		return nil, fmt.Errorf("creating application credential %s: %w", want.Name, err)
	}
	return &AppCred{ID: created.ID, Secret: created.Secret, ExpiresAt: created.ExpiresAt}, nil
}

// AppCredInfo is what Keystone says of an existing application credential.
type AppCredInfo struct {
	ID          string `json:"id"`
	UserID      string `json:"user_id"`
	Description string `json:"description"`
}

// MarkedBy tells whether the credential carries owner's mark in its description (the
// object it names, with or without a cluster: earlier versions' marks name none).
func (a *AppCredInfo) MarkedBy(owner string) bool {
	object, _ := splitMark(owner)
	return object != "" && (strings.Contains(a.Description, "[owner "+object+"]") || strings.Contains(a.Description, "[owner "+object+"@"))
}

// GetAppCred returns the application credential id; nil when Keystone has none with
// that ID. Keystone finds a credential by its ID alone, whatever user the request's path
// names, and checks its policy against the credential's own user
// (keystone/api/users.py, _update_request_user_id_attribute): the admin may read any, so
// its nil means gone; a user without the admin role is refused another user's (an error).
func (c *Client) GetAppCred(ctx context.Context, id string) (*AppCredInfo, error) {
	var got struct {
		AppCred AppCredInfo `json:"application_credential"`
	}
	err := applicationcredentials.Get(ctx, c.sc, c.UserID(), id).ExtractInto(&got)
	switch {
	case err == nil:
		return &got.AppCred, nil
	case notFound(err):
		return nil, nil
	default:
		return nil, fmt.Errorf("reading application credential %s: %w", id, err)
	}
}

// AppCredUser returns the ID of the user the application credential id belongs to, ""
// when Keystone has no credential with that ID (GetAppCred).
func (c *Client) AppCredUser(ctx context.Context, id string) (string, error) {
	info, err := c.GetAppCred(ctx, id)
	if err != nil || info == nil {
		return "", err
	}
	return info.UserID, nil
}

// OwnedAppCreds returns the IDs of the user's application credentials marked with owner.
func (c *Client) OwnedAppCreds(ctx context.Context, userID, owner string) ([]string, error) {
	pages, err := applicationcredentials.List(c.sc, userID, applicationcredentials.ListOpts{}).AllPages(ctx)
	if err = c.staleUser(err, userID); err != nil {
		return nil, fmt.Errorf("listing the application credentials of user %s: %w", userID, err)
	}
	all, err := applicationcredentials.ExtractApplicationCredentials(pages)
	if err != nil {
		return nil, fmt.Errorf("reading the application credentials of user %s: %w", userID, err)
	}
	var ids []string
	for _, ac := range all {
		if (&AppCredInfo{Description: ac.Description}).MarkedBy(owner) {
			ids = append(ids, ac.ID)
		}
	}
	return ids, nil
}

// DeleteAppCred revokes the application credential id at its owner's path
// (DELETE /v3/users/<owner>/application_credentials/<id>, as the API is documented;
// Keystone 22 would take any user's path, as it finds a credential by its ID alone, a
// later one need not). The owner is read first (GetAppCred): the client's own user for a
// credential it made, any user's for the admin. One already gone is fine.
func (c *Client) DeleteAppCred(ctx context.Context, id string) error {
	info, err := c.GetAppCred(ctx, id)
	if err != nil || info == nil {
		return err
	}
	if err := applicationcredentials.Delete(ctx, c.sc, info.UserID, id).ExtractErr(); err != nil && !notFound(err) {
		return fmt.Errorf("revoking application credential %s of user %s: %w", id, info.UserID, err)
	}
	return nil
}

// FindUserID returns the ID of the user named name in the domain, "" when there is none.
func (c *Client) FindUserID(ctx context.Context, domainID, name string) (string, error) {
	u, err := c.findUser(ctx, domainID, name)
	if err != nil || u == nil {
		return "", err
	}
	return u.ID, nil
}
