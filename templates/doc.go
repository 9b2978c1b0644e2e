// Package templates embeds the files rendered into Keystone's configuration.
package templates

import "embed"

// KeystoneAPI holds the templates of a KeystoneAPI's configuration Secret, one file each.
//
//go:embed keystoneapi/*
var KeystoneAPI embed.FS
