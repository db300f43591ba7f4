-- mfm_state: appends one JSON line per 0.1 s to <world>/mfm_state.jsonl
-- with the player's pose, vitals, inventory, controls, game time, what the
-- crosshair points at, the nearest standing tree (base and height), dropped
-- items, and the events since the last line.
-- Written for the MFM Luanti harness (package luanti).
local path = minetest.get_worldpath() .. "/mfm_state.jsonl"
local out = assert(io.open(path, "a"))
local events = {}
local seq = 0
local tree_cache = nil
local acc = 0
local period = tonumber(minetest.settings:get("mfm_state_period")) or 0.1

local function ev(e) events[#events + 1] = e end

-- Minecraft-like drops (setting mfm_item_drops, default true): a dug
-- node's drops fall to the ground as items instead of going straight into
-- the inventory, and a player picks up items by walking over them (within
-- 1.2 blocks, once they are 0.6 s old), so gathering means collecting.
local item_drops = minetest.settings:get_bool("mfm_item_drops", true)
if item_drops then
	function minetest.handle_node_drops(pos, drops, digger)
		for _, item in ipairs(drops) do
			minetest.add_item({x = pos.x + math.random() * 0.4 - 0.2, y = pos.y,
				z = pos.z + math.random() * 0.4 - 0.2}, item)
		end
	end
end

local function pick_up(player)
	local inv = player:get_inventory()
	local center = vector.add(player:get_pos(), {x = 0, y = 0.5, z = 0})
	for _, obj in ipairs(minetest.get_objects_inside_radius(center, 1.2)) do
		local le = obj:get_luaentity()
		if le and le.name == "__builtin:item" and le.itemstring ~= "" and (le.age or 1) > 0.6 then
			local stack = ItemStack(le.itemstring)
			local left = inv:add_item("main", stack)
			local got = stack:get_count() - left:get_count()
			if got > 0 then
				ev({type = "pickup", item = stack:get_name(), count = got})
			end
			if left:is_empty() then
				obj:remove()
			else
				le:set_item(left)
			end
		end
	end
end
local function p3(p) return {x = p.x, y = p.y, z = p.z} end

minetest.register_on_newplayer(function(player)
	local inv = player:get_inventory()
	for _, s in ipairs({"default:pick_stone", "default:shovel_stone", "default:axe_stone",
			"default:dirt 99", "default:dirt 99", "default:apple 40", "default:torch 10"}) do
		inv:add_item("main", s)
	end
end)
minetest.register_on_dignode(function(pos, oldnode, digger)
	if digger and digger:is_player() then ev({type = "dig", node = oldnode.name, pos = p3(pos)}) end
	tree_cache = nil
end)
minetest.register_on_placenode(function(pos, newnode, placer)
	if placer and placer:is_player() then ev({type = "place", node = newnode.name, pos = p3(pos)}) end
end)
minetest.register_on_player_hpchange(function(player, hp_change, reason)
	ev({type = "hp", change = hp_change, reason = reason and reason.type or "unknown",
		node = reason and reason.node or nil})
end, false)
minetest.register_on_dieplayer(function(player, reason)
	ev({type = "die", reason = reason and reason.type or "unknown"})
end)
minetest.register_on_respawnplayer(function(player)
	ev({type = "respawn"})
end)
minetest.register_on_item_eat(function(hp_change, replace_with_item, itemstack, user, pointed_thing)
	ev({type = "eat", item = itemstack:get_name(), hp = hp_change})
end)

local function pointed(player)
	local eye = vector.add(player:get_pos(), {x = 0, y = player:get_properties().eye_height or 1.47, z = 0})
	local to = vector.add(eye, vector.multiply(player:get_look_dir(), 5))
	for pt in minetest.raycast(eye, to, false, false) do
		if pt.type == "node" then
			local n = minetest.get_node(pt.under)
			local def = minetest.registered_nodes[n.name]
			if def and def.pointable ~= false and n.name ~= "air" then
				return {node = n.name, under = p3(pt.under), above = p3(pt.above),
					dist = vector.distance(eye, pt.intersection_point),
					-- soft: leaves and plants, cut in a moment, in the way of the block behind
					soft = def.buildable_to or minetest.get_item_group(n.name, "leaves") > 0}
			end
		end
	end
	return nil
end

local function nodename(p) return minetest.get_node(p).name end

-- The nearest standing tree: the lowest trunk node of a column that rests
-- on walkable ground (not on trunk or leaves, so felled and floating
-- trunks are skipped), with the column's height.
local function find_tree(feet)
	local nodes = minetest.find_nodes_in_area(vector.add(feet, {x = -20, y = -6, z = -20}),
		vector.add(feet, {x = 20, y = 8, z = 20}), {"group:tree"})
	local best, bestd
	for _, p in ipairs(nodes) do
		local below = nodename({x = p.x, y = p.y - 1, z = p.z})
		local def = minetest.registered_nodes[below]
		if def and def.walkable and minetest.get_item_group(below, "tree") == 0 and
				minetest.get_item_group(below, "leaves") == 0 then
			local h = 0
			while h < 12 and minetest.get_item_group(nodename({x = p.x, y = p.y + h, z = p.z}), "tree") > 0 do
				h = h + 1
			end
			-- A stump (one block, often sunk in the ground) is not a tree.
			local d = (p.x - feet.x) ^ 2 + (p.z - feet.z) ^ 2 + 4 * (p.y - feet.y) ^ 2
			if h >= 2 and (not bestd or d < bestd) then
				best, bestd = {x = p.x, y = p.y, z = p.z, height = h, node = nodename(p)}, d
			end
		end
	end
	if not best then return false end
	return best
end

minetest.register_globalstep(function(dtime)
	acc = acc + dtime
	if acc < period then return end
	acc = 0
	for _, player in ipairs(minetest.get_connected_players()) do
		if item_drops and player:get_hp() > 0 then pick_up(player) end
		seq = seq + 1
		local pos = player:get_pos()
		local inv = {}
		for _, st in ipairs(player:get_inventory():get_list("main")) do
			if not st:is_empty() then inv[st:get_name()] = (inv[st:get_name()] or 0) + st:get_count() end
		end
		local hotbar = {}
		for i, st in ipairs(player:get_inventory():get_list("main")) do
			if i > 8 then break end
			hotbar[i] = st:get_name()
		end
		local feet = vector.round(pos)
		if seq % 10 == 1 or tree_cache == nil then
			tree_cache = find_tree(feet)
		end
		local tree = tree_cache
		local bd = minetest.get_biome_data(pos)
		local head = math.floor(pos.y + 0.5) + 2
		local headroom = 0
		while headroom < 16 do
			local def = minetest.registered_nodes[nodename({x = feet.x, y = head + headroom, z = feet.z})]
			if def and def.walkable then break end
			headroom = headroom + 1
		end
		local items = {}
		for _, obj in ipairs(minetest.get_objects_inside_radius(pos, 8)) do
			local le = obj:get_luaentity()
			if le and le.name == "__builtin:item" then items[#items + 1] = {pos = p3(obj:get_pos()), item = le.itemstring} end
		end
		local line = minetest.write_json({
			seq = seq,
			us = minetest.get_us_time(),
			gametime = minetest.get_gametime(),
			timeofday = minetest.get_timeofday(),
			pos = p3(pos),
			vel = p3(player:get_velocity()),
			yaw = math.deg(player:get_look_horizontal()),
			pitch = math.deg(player:get_look_vertical()),
			hp = player:get_hp(),
			breath = player:get_breath(),
			wielded = player:get_wielded_item():get_name(),
			wield_index = player:get_wield_index(),
			hotbar = hotbar,
			inventory = inv,
			controls = player:get_player_control(),
			pointed = pointed(player) or false,
			below = nodename({x = feet.x, y = math.floor(pos.y + 0.5) - 1, z = feet.z}),
			tree = tree or false,
			biome = bd and minetest.get_biome_name(bd.biome) or "",
			headroom = headroom,
			items = items,
			events = events,
		})
		events = {}
		out:write(line, "\n")
		out:flush()
	end
end)
minetest.register_on_shutdown(function() out:close() end)
